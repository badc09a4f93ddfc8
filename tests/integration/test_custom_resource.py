"""The stack's custom resource, driven with CloudFormation's Create, Update and Delete requests.

The two SSM SecureString parameters live in moto, Telegram is the fake Bot API server, and
CloudFormation's pre-signed ResponseURL names an S3 host, as a real one does, which the
function's opener reaches as a local HTTP server that records every PUT: so each test sees what
the function told Telegram and what it answered CloudFormation, including when SSM, Telegram or
the answer itself fails, and that a request CloudFormation did not send is not obeyed.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from moto import mock_aws

from handlers import custom_resource
from handlers.custom_resource import ANSWER_RESERVE, FAILED, SUCCESS, AnswerError, handle
from handlers.text import COMMANDS, SUPPORTED
from infra.fake_telegram import FakeTelegram, api_error, bad_request, delay, server_error

REGION = "eu-west-3"
STACK_ID = f"arn:aws:cloudformation:{REGION}:123456789012:stack/menteur-test/0f1e2d3c"
URL = f"https://a1b2c3d4e5.execute-api.{REGION}.amazonaws.com/webhook"
TOKEN = "123456789:AAFakeTokenForTests_only-abcdefghijk"
SECRET = "s3cr3t_Webhook-Value_for_tests_0123456789"
TOKEN_PARAMETER = "/menteur-test/bot-token"
SECRET_PARAMETER = "/menteur-test/webhook-secret"
UPDATES = ["message", "callback_query", "my_chat_member"]
SECRETS = (TOKEN, TOKEN.split(":")[1], SECRET)
SECONDS = 60.0  # the function's Timeout, as Lambda's context would tell it
# Where CloudFormation's answers go in eu-west-3: a pre-signed URL of this bucket.
S3 = "https://cloudformation-custom-resource-response-euwest3.s3.eu-west-3.amazonaws.com"
ATTACKER = "https://attacker.example/hook"
URLOPEN = urllib.request.urlopen  # the real one, which a test replaces by S3's stand-in


# ---------------------------------------------------------------------------------------------
# CloudFormation's side: the pre-signed URL that receives the answer.


@dataclass
class Put:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    size: int


@dataclass
class ResponseBucket:
    """Records every PUT; answers `failures` of them with 500 first (S3 having a bad moment)."""

    port: int = 0
    puts: list[Put] = field(default_factory=list)
    failures: int = 0
    methods: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"{S3}/{urllib.parse.quote(STACK_ID, safe='')}/{uuid.uuid4()}?X-Amz-Signature=abc"

    def open(self, request: urllib.request.Request, *, timeout: float) -> Any:
        """The function's opener: S3's host is this local server (no test reaches the network)."""
        assert request.full_url.startswith(f"{S3}/"), request.full_url
        local = f"http://127.0.0.1:{self.port}{request.full_url.removeprefix(S3)}"
        headers = dict(request.header_items())
        moved = urllib.request.Request(local, request.data, headers, method=request.method)
        return URLOPEN(moved, timeout=timeout)

    def last(self) -> dict[str, Any]:
        assert self.puts, "CloudFormation got no answer"
        return self.puts[-1].body


@pytest.fixture
def bucket() -> Iterator[ResponseBucket]:
    record = ResponseBucket()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            size = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(size)
            with lock:
                record.methods.append("PUT")
                if record.failures > 0:
                    record.failures -= 1
                    self.send_response(500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                record.puts.append(Put(self.path, dict(self.headers), json.loads(raw), size))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            record.methods.append("POST")
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    record.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    yield record
    server.shutdown()
    server.server_close()
    thread.join()


# ---------------------------------------------------------------------------------------------
# The rest of the world.


@pytest.fixture(autouse=True)
def aws(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("PTB_TIMEDELTA", "true")
    monkeypatch.setattr(custom_resource, "ANSWER_PAUSE", 0.0)


@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


@pytest.fixture
def ssm() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("ssm", region_name=REGION)
        for name, value in ((TOKEN_PARAMETER, TOKEN), (SECRET_PARAMETER, SECRET)):
            client.put_parameter(Name=name, Value=value, Type="SecureString")
        yield client


@dataclass
class Stack:
    """Sends the stack's requests to the function, as CloudFormation would."""

    ssm: Any
    tg: FakeTelegram
    bucket: ResponseBucket
    physical_id: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    #: What the template put in the function's environment: the stack's own webhook URL.
    webhook_url: str = URL

    def __post_init__(self) -> None:
        self.properties = {
            "ServiceToken": f"arn:aws:lambda:{REGION}:123456789012:function:menteur-Registration",
            "ServiceTimeout": "300",
            "WebhookUrl": URL,
            "BotTokenParameterName": TOKEN_PARAMETER,
            "WebhookSecretParameterName": SECRET_PARAMETER,
            "TakeOverWebhook": "no",
            "SecretsRevision": "1",
            "CodeVersion": f"arn:aws:lambda:{REGION}:123456789012:function:menteur-Registration:1",
        }

    @property
    def environ(self) -> dict[str, str]:
        return {"TELEGRAM_API_BASE_URL": self.tg.base_url, "WEBHOOK_URL": self.webhook_url}

    def event(self, kind: str, **changes: str) -> dict[str, Any]:
        event: dict[str, Any] = {
            "RequestType": kind,
            "ServiceToken": self.properties["ServiceToken"],
            "ResponseURL": self.bucket.url,
            "StackId": STACK_ID,
            "RequestId": str(uuid.uuid4()),
            "LogicalResourceId": "TelegramRegistration",
            "ResourceType": "Custom::TelegramRegistration",
            "ResourceProperties": {**self.properties, **changes},
        }
        if kind != "Create":
            event["PhysicalResourceId"] = self.physical_id or "menteur-test-TelegramRegistration"
        if kind == "Update":
            event["OldResourceProperties"] = dict(self.properties)
        return event

    def send(self, kind: str, *, seconds: float = SECONDS, **changes: str) -> dict[str, Any]:
        """One request; returns what CloudFormation received (checked against what was sent)."""
        event = self.event(kind, **changes)
        returned = self.handle(event, seconds=seconds)
        answer = self.bucket.last()
        assert answer == returned
        for key in ("StackId", "RequestId", "LogicalResourceId"):
            assert answer[key] == event[key], key
        assert answer["Status"] in (SUCCESS, FAILED)
        assert answer["PhysicalResourceId"]
        if kind == "Create":
            self.physical_id = answer["PhysicalResourceId"]
        else:
            assert answer["PhysicalResourceId"] == event["PhysicalResourceId"]
        if answer["Status"] == SUCCESS and kind != "Delete":
            self.properties.update(changes)
        return answer

    def handle(self, event: dict[str, Any], *, seconds: float = SECONDS) -> dict[str, Any] | None:
        return handle(
            event, seconds=seconds, ssm=self.ssm, environ=self.environ, opener=self.bucket.open
        )


@pytest.fixture
def stack(ssm: Any, tg: FakeTelegram, bucket: ResponseBucket) -> Stack:
    return Stack(ssm, tg, bucket)


def assert_no_secret(*texts: str) -> None:
    everything = "\n".join(texts).lower()
    for value in SECRETS:
        assert value.lower() not in everything


# ---------------------------------------------------------------------------------------------
# Create and Update.


def test_create_sets_the_webhook_with_the_secret_and_the_update_types_the_bot_reads(
    stack: Stack, tg: FakeTelegram, bucket: ResponseBucket
) -> None:
    answer = stack.send("Create")
    assert answer["Status"] == SUCCESS, answer["Reason"]

    (call,) = tg.calls("setWebhook")
    assert call.token == TOKEN
    assert call.params["url"] == URL
    assert call.params["secret_token"] == SECRET
    # my_chat_member: the bot learns it was removed from a group. A list replaces Telegram's
    # default set, so every type wanted is named.
    assert call.params["allowed_updates"] == UPDATES
    assert call.params["max_connections"] == 40
    assert "drop_pending_updates" not in call.params  # a deploy never loses players' moves
    assert tg.webhook_url == URL
    assert URL in answer["Reason"]
    assert_no_secret(json.dumps(answer))

    # As CloudFormation's pre-signed URL expects it: a PUT of JSON with an empty content type.
    (put,) = bucket.puts
    assert bucket.methods == ["PUT"]
    assert put.headers.get("Content-Type", "") == ""
    assert put.size < 4096
    assert set(answer) == {
        "Status",
        "Reason",
        "PhysicalResourceId",
        "StackId",
        "RequestId",
        "LogicalResourceId",
    }


def test_create_sets_every_command_menu(stack: Stack, tg: FakeTelegram) -> None:
    assert stack.send("Create")["Status"] == SUCCESS
    menus = {
        (call.params["scope"]["type"], call.params.get("language_code")): [
            c["command"] for c in call.params["commands"]
        ]
        for call in tg.calls("setMyCommands")
    }
    assert len(tg.calls("setMyCommands")) == len(menus) == 2 * len(SUPPORTED)
    for language in (None, *SUPPORTED[1:]):
        assert menus[("all_group_chats", language)] == list(COMMANDS)
        assert menus[("all_private_chats", language)] == ["start", "help", "rules"]


def test_an_update_registers_again_and_keeps_the_physical_id(
    stack: Stack, tg: FakeTelegram
) -> None:
    assert stack.send("Create")["Status"] == SUCCESS
    created = stack.physical_id
    tg.clear()

    moved = "https://f6e5d4c3b2.execute-api.eu-west-3.amazonaws.com/webhook"
    stack.webhook_url = moved  # the template's new URL, in the function's environment first
    answer = stack.send("Update", WebhookUrl=moved)
    assert answer["Status"] == SUCCESS, answer["Reason"]
    # The same id: a new one would have CloudFormation delete the "old" resource afterwards,
    # and with it the webhook just set.
    assert answer["PhysicalResourceId"] == created
    assert tg.webhook_url == moved
    assert len(tg.calls("setMyCommands")) == 2 * len(SUPPORTED)
    assert not tg.calls("deleteWebhook")


def test_a_new_secrets_revision_registers_the_rotated_secret(
    stack: Stack, ssm: Any, tg: FakeTelegram
) -> None:
    assert stack.send("Create")["Status"] == SUCCESS
    rotated = "a-new-secret_after-rotation"
    ssm.put_parameter(Name=SECRET_PARAMETER, Value=rotated, Type="SecureString", Overwrite=True)

    answer = stack.send("Update", SecretsRevision="2026-05-01")
    assert answer["Status"] == SUCCESS, answer["Reason"]
    assert tg.calls("setWebhook")[-1].params["secret_token"] == rotated
    assert rotated not in json.dumps(answer)


@pytest.mark.parametrize("kind", ["Create", "Update"])
def test_a_missing_parameter_fails_with_how_to_create_it(
    kind: str, stack: Stack, ssm: Any, tg: FakeTelegram
) -> None:
    ssm.delete_parameter(Name=SECRET_PARAMETER)
    answer = stack.send(kind)
    assert answer["Status"] == FAILED
    assert SECRET_PARAMETER in answer["Reason"]
    assert "put-parameter --type SecureString" in answer["Reason"]
    assert not tg.calls("setWebhook")


def test_a_malformed_secret_fails_before_telegram_is_called(
    stack: Stack, ssm: Any, tg: FakeTelegram
) -> None:
    bad = "has spaces and = signs"
    ssm.put_parameter(Name=SECRET_PARAMETER, Value=bad, Type="SecureString", Overwrite=True)
    answer = stack.send("Create")
    assert answer["Status"] == FAILED
    assert "generate-secret" in answer["Reason"]
    assert bad not in answer["Reason"]
    assert not tg.calls()


def test_a_property_missing_from_the_template_fails(stack: Stack, tg: FakeTelegram) -> None:
    answer = stack.send("Create", BotTokenParameterName="")
    assert answer["Status"] == FAILED
    assert "no BotTokenParameterName property" in answer["Reason"]
    stack.webhook_url = ""
    answer = stack.send("Create")
    assert answer["Status"] == FAILED
    assert "no WEBHOOK_URL in its environment" in answer["Reason"]
    stack.webhook_url = "http://insecure.example/webhook"
    answer = stack.send("Create", WebhookUrl=stack.webhook_url)
    assert answer["Status"] == FAILED
    assert "not an https URL" in answer["Reason"]
    assert not tg.calls()


# ---------------------------------------------------------------------------------------------
# Trusting nothing a request says.


@pytest.mark.parametrize("kind", ["Create", "Update"])
def test_a_request_naming_another_webhook_url_is_refused_and_the_secret_stays_home(
    kind: str, stack: Stack, tg: FakeTelegram
) -> None:
    answer = stack.send(kind, WebhookUrl=ATTACKER)
    assert answer["Status"] == FAILED
    assert ATTACKER in answer["Reason"] and "refused" in answer["Reason"]
    assert not tg.calls("setWebhook")
    assert tg.webhook_url == ""
    # Asked again with the stack's own URL, it registers that one.
    assert stack.send(kind)["Status"] == SUCCESS
    assert tg.webhook_url == URL


FOREIGN = [
    "http://127.0.0.1:9/cfn-response",
    f"http{S3.removeprefix('https')}/response?X-Amz-Signature=abc",  # S3, but plain http
    "https://attacker.example/response",
    "https://s3.amazonaws.com.attacker.example/response",
    "https://attacker-s3.amazonaws.example/response",
    f"https://x@attacker.example@{S3.removeprefix('https://')}/response",
    f"{S3}:8443/response",
    "",
    None,
]


def test_a_request_with_a_foreign_response_url_is_neither_obeyed_nor_answered() -> None:
    touched: list[str] = []

    class Untouchable:
        """SSM, which such a request must not reach."""

        def __getattr__(self, name: str) -> Any:
            touched.append(name)
            raise AssertionError(name)

    def opener(request: urllib.request.Request, *, timeout: float) -> Any:
        touched.append(request.full_url)
        raise AssertionError("no answer is sent")

    environ = {"TELEGRAM_API_BASE_URL": "http://127.0.0.1:9/bot", "WEBHOOK_URL": URL}
    for url in FOREIGN:
        for kind in ("Create", "Update", "Delete"):
            event = {
                "RequestType": kind,
                "ResponseURL": url,
                "StackId": STACK_ID,
                "RequestId": str(uuid.uuid4()),
                "LogicalResourceId": "TelegramRegistration",
                "PhysicalResourceId": "menteur-test-TelegramRegistration",
                "ResourceProperties": {"WebhookUrl": ATTACKER},
            }
            answer = handle(
                event, seconds=SECONDS, ssm=Untouchable(), environ=environ, opener=opener
            )
            assert answer is None, url
    assert touched == []


def test_cloudformations_response_hosts_in_every_partition_are_accepted() -> None:
    for host in (
        "cloudformation-custom-resource-response-useast1.s3.amazonaws.com",
        "cloudformation-custom-resource-response-uswest2.s3-us-west-2.amazonaws.com",
        "cloudformation-custom-resource-response-euwest3.s3.eu-west-3.amazonaws.com",
        "cloudformation-custom-resource-response-cnnorth1.s3.cn-north-1.amazonaws.com.cn",
        "s3.amazonaws.com",
    ):
        assert custom_resource.is_response_url(f"https://{host}/arn%3A/x?X-Amz-Signature=a")


def test_a_create_fails_when_the_bot_is_another_stacks_unless_told_to_take_it_over(
    stack: Stack, tg: FakeTelegram
) -> None:
    other = "https://0a0b0c0d0e.execute-api.eu-west-3.amazonaws.com/webhook"
    set_webhook_elsewhere(tg, other)
    answer = stack.send("Create")
    assert answer["Status"] == FAILED
    assert other in answer["Reason"] and "TakeOverWebhook=yes" in answer["Reason"]
    assert "\n" not in answer["Reason"]
    assert not tg.calls("setWebhook") and not tg.calls("setMyCommands")
    assert tg.webhook_url == other

    answer = stack.send("Create", TakeOverWebhook="yes")
    assert answer["Status"] == SUCCESS, answer["Reason"]
    assert tg.webhook_url == URL


def test_a_create_takes_a_webhook_that_is_already_its_own_or_none(
    stack: Stack, tg: FakeTelegram
) -> None:
    # A stack deleted while Telegram was down left its webhook; the same stack made again
    # has the same URL: no other stack's.
    set_webhook_elsewhere(tg, URL)
    assert stack.send("Create")["Status"] == SUCCESS
    tg.clear()
    set_webhook_elsewhere(tg, "")
    assert stack.send("Create")["Status"] == SUCCESS
    assert tg.webhook_url == URL


def test_an_update_registers_again_wherever_the_webhook_pointed(
    stack: Stack, tg: FakeTelegram
) -> None:
    """The stack had the bot: a deploy of it takes the bot back (docs/deploying.md)."""
    assert stack.send("Create")["Status"] == SUCCESS
    set_webhook_elsewhere(tg, "https://0a0b0c0d0e.execute-api.eu-west-3.amazonaws.com/webhook")
    assert stack.send("Update", SecretsRevision="2")["Status"] == SUCCESS
    assert tg.webhook_url == URL


def test_telegram_refusing_fails_and_says_which_call(stack: Stack, tg: FakeTelegram) -> None:
    tg.fail_next("setWebhook", error=bad_request("bad webhook: Failed to resolve host"))
    answer = stack.send("Create")
    assert answer["Status"] == FAILED
    assert answer["Reason"].startswith("setWebhook failed: ")
    assert "resolve host" in answer["Reason"]

    tg.fail_next("setMyCommands", error=server_error(502))
    answer = stack.send("Create")
    assert answer["Status"] == FAILED
    assert answer["Reason"].startswith("setMyCommands failed: ")


def test_a_revoked_token_fails_with_what_to_do(stack: Stack, tg: FakeTelegram) -> None:
    tg.fail_next("setWebhook", error=api_error(401, "Unauthorized"))
    answer = stack.send("Create")
    assert answer["Status"] == FAILED
    assert "refused the bot token" in answer["Reason"]
    assert "@BotFather" in answer["Reason"]


def test_an_unknown_request_type_fails(stack: Stack, tg: FakeTelegram) -> None:
    answer = stack.send("Create")
    stack.physical_id = answer["PhysicalResourceId"]
    stack.handle(stack.event("Replace"))
    assert stack.bucket.last()["Status"] == FAILED
    assert "unknown request type 'Replace'" in stack.bucket.last()["Reason"]


# ---------------------------------------------------------------------------------------------
# Delete.


def test_delete_removes_the_stacks_webhook(stack: Stack, tg: FakeTelegram) -> None:
    assert stack.send("Create")["Status"] == SUCCESS
    answer = stack.send("Delete")
    assert answer["Status"] == SUCCESS
    (call,) = tg.calls("deleteWebhook")
    assert "drop_pending_updates" not in call.params
    assert tg.webhook_url == ""
    assert "deleted" in answer["Reason"]


def set_webhook_elsewhere(tg: FakeTelegram, url: str) -> None:
    """Another stack (or telegram_setup register) sets the bot's webhook."""
    tg.clear()
    request = urllib.request.Request(
        f"{tg.base_url}{TOKEN}/setWebhook",
        data=json.dumps({"url": url}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as reply:
        assert json.load(reply)["ok"] is True
    assert tg.webhook_url == url
    tg.clear()


def test_delete_leaves_a_webhook_that_another_stack_set(stack: Stack, tg: FakeTelegram) -> None:
    assert stack.send("Create")["Status"] == SUCCESS
    other = "https://0a0b0c0d0e.execute-api.eu-west-3.amazonaws.com/webhook"
    set_webhook_elsewhere(tg, other)
    answer = stack.send("Delete")
    assert answer["Status"] == SUCCESS
    assert not tg.calls("deleteWebhook")
    assert tg.webhook_url == other
    assert "points elsewhere" in answer["Reason"]


def test_delete_without_a_webhook_changes_nothing(stack: Stack, tg: FakeTelegram) -> None:
    answer = stack.send("Delete")
    assert answer["Status"] == SUCCESS
    assert not tg.calls("deleteWebhook")
    assert "no webhook was set" in answer["Reason"]


@pytest.mark.parametrize(
    "fault",
    [server_error(502), api_error(401, "Unauthorized"), bad_request("something else")],
    ids=["telegram-down", "token-revoked", "bad-request"],
)
def test_delete_succeeds_whatever_telegram_answers(
    fault: Any, stack: Stack, tg: FakeTelegram
) -> None:
    assert stack.send("Create")["Status"] == SUCCESS
    tg.fail_always(error=fault)
    answer = stack.send("Delete")
    assert answer["Status"] == SUCCESS
    assert "webhook was left as it was" in answer["Reason"]


def test_delete_succeeds_when_the_parameters_are_gone(
    stack: Stack, ssm: Any, tg: FakeTelegram
) -> None:
    assert stack.send("Create")["Status"] == SUCCESS
    ssm.delete_parameter(Name=TOKEN_PARAMETER)
    ssm.delete_parameter(Name=SECRET_PARAMETER)
    tg.clear()
    answer = stack.send("Delete")
    assert answer["Status"] == SUCCESS
    assert TOKEN_PARAMETER in answer["Reason"]
    assert not tg.calls()


# ---------------------------------------------------------------------------------------------
# Always an answer, never a secret.


def test_a_request_telegram_does_not_finish_is_answered_before_the_function_times_out(
    stack: Stack, tg: FakeTelegram
) -> None:
    # The function is given just over what answering needs; Telegram takes seconds more.
    tg.fail_next("setWebhook", error=delay(3.0))
    answer = stack.send("Create", seconds=ANSWER_RESERVE + 0.3)
    assert answer["Status"] == FAILED
    assert "did not answer within" in answer["Reason"]

    tg.fail_next("getWebhookInfo", error=delay(3.0))
    answer = stack.send("Delete", seconds=ANSWER_RESERVE + 0.3)
    assert answer["Status"] == SUCCESS
    assert "did not answer within" in answer["Reason"]


def test_the_answer_is_sent_again_when_the_url_fails_once(
    stack: Stack, bucket: ResponseBucket
) -> None:
    bucket.failures = 1
    assert stack.send("Create")["Status"] == SUCCESS
    assert len(bucket.puts) == 1
    assert bucket.methods == ["PUT", "PUT"]


def test_an_answer_that_cannot_be_delivered_raises_so_lambda_invokes_again(
    stack: Stack, bucket: ResponseBucket
) -> None:
    bucket.failures = custom_resource.ANSWER_ATTEMPTS
    with pytest.raises(AnswerError):
        stack.send("Create")
    assert bucket.methods == ["PUT"] * custom_resource.ANSWER_ATTEMPTS
    assert not bucket.puts


def test_lambda_handler_takes_its_time_from_the_context(
    stack: Stack, tg: FakeTelegram, bucket: ResponseBucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Context:
        def get_remaining_time_in_millis(self) -> int:
            return int((ANSWER_RESERVE + 0.3) * 1000)

    monkeypatch.setenv("TELEGRAM_API_BASE_URL", tg.base_url)
    monkeypatch.setenv("WEBHOOK_URL", URL)
    monkeypatch.setattr(urllib.request, "urlopen", bucket.open)  # its default opener
    tg.fail_next("setWebhook", error=delay(3.0))
    # It makes its own SSM client: moto's, as the `ssm` fixture is active.
    custom_resource.lambda_handler(stack.event("Create"), Context())
    assert bucket.last()["Status"] == FAILED
    assert "did not answer within" in bucket.last()["Reason"]


def test_neither_the_token_nor_the_secret_reaches_an_answer_or_a_log_record(
    stack: Stack,
    tg: FakeTelegram,
    bucket: ResponseBucket,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)  # the worst case: every logger at its most verbose
    # Telegram's error texts echo nothing secret, but the function must redact anyway.
    echo = f"bad webhook: {SECRET} {TOKEN}"
    tg.fail_next("setWebhook", error=bad_request(echo))
    assert stack.send("Create")["Status"] == FAILED
    tg.fail_next("setMyCommands", error=bad_request(echo))
    assert stack.send("Create")["Status"] == FAILED
    assert stack.send("Create")["Status"] == SUCCESS
    assert stack.send("Update", SecretsRevision="2")["Status"] == SUCCESS
    tg.fail_next("getWebhookInfo", error=bad_request(echo))
    assert stack.send("Delete")["Status"] == SUCCESS
    tg.fail_next("deleteWebhook", error=api_error(500, f"Internal: {TOKEN}"))
    assert stack.send("Delete")["Status"] == SUCCESS
    assert stack.send("Delete")["Status"] == SUCCESS

    answers = [json.dumps(put.body) for put in bucket.puts]
    assert len(answers) == 7
    assert "[redacted]" in answers[0]
    captured = capsys.readouterr()
    assert caplog.records, "the function logs each answer"
    assert_no_secret(*answers, caplog.text, captured.out, captured.err)
