"""infra.telegram_setup against SSM (moto), a stubbed CloudFormation and the fake Bot API.

moto's CloudFormation needs extras this project does not install, so describe_stacks is answered
by botocore's Stubber, which still checks the request and the response against the service's
own model. The SSM SecureString parameters live in moto.
"""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from handlers import registration
from handlers.text import COMMANDS, SUPPORTED, commands
from infra.fake_telegram import FakeTelegram, bad_request
from infra.telegram_setup import (
    SECRET_ALPHABET,
    SECRET_FIRST,
    AwsClients,
    generate_secret,
    main,
)

ROOT = Path(__file__).resolve().parents[2]
REGION = "eu-west-3"
STACK = "menteur-test"
URL = f"https://a1b2c3d4e5.execute-api.{REGION}.amazonaws.com/webhook"
TOKEN = "123456789:AAFakeTokenForTests_only-abcdefghijk"
SECRET = "s3cr3t_Webhook-Value_for_tests_0123456789"
TOKEN_PARAMETER = "/menteur-test/bot-token"
SECRET_PARAMETER = "/menteur-test/webhook-secret"

GROUP = [
    "newgame",
    "join",
    "leave",
    "forfeit",
    "stop",
    "hand",
    "table",
    "addbot",
    "rules",
    "language",
    "settings",
    "kick",
    "help",
]
PRIVATE = ["start", "help", "rules"]
NOW = 1_767_225_600.0  # 2026-01-01 00:00 UTC: `info` judges how recent an error is by it


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tg: FakeTelegram) -> None:
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", tg.base_url)
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@pytest.fixture
def ssm() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("ssm", region_name=REGION)
        for name, value in ((TOKEN_PARAMETER, TOKEN), (SECRET_PARAMETER, SECRET)):
            client.put_parameter(Name=name, Value=value, Type="SecureString")
        yield client


def stack_answer(
    outputs: dict[str, str] | None = None, parameters: dict[str, str] | None = None
) -> dict[str, Any]:
    """What describe_stacks says about a deployed stack of this project's template."""
    if outputs is None:
        outputs = {"WebhookUrl": URL, "TableName": "menteur-test-GamesTable-1"}
    if parameters is None:
        parameters = {
            "BotTokenParameterName": TOKEN_PARAMETER,
            "WebhookSecretParameterName": SECRET_PARAMETER,
            "LogLevel": "INFO",
        }
    return {
        "Stacks": [
            {
                "StackName": STACK,
                "StackId": f"arn:aws:cloudformation:{REGION}:123456789012:stack/{STACK}/1",
                "CreationTime": "2026-01-01T00:00:00Z",
                "StackStatus": "CREATE_COMPLETE",
                "Parameters": [
                    {"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()
                ],
                "Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in outputs.items()],
            }
        ]
    }


class Run:
    """Runs the script's main() with the AWS clients given, capturing what it prints."""

    def __init__(self, ssm: Any) -> None:
        self.ssm = ssm
        self.cloudwatch = boto3.client("cloudwatch", region_name=REGION)  # moto's
        self.cloudformation = boto3.client("cloudformation", region_name=REGION)
        self.stubber = Stubber(self.cloudformation)
        self.stubber.activate()
        self.out = ""
        self.err = ""

    def expect_stack(self, answer: dict[str, Any] | None = None, *, name: str = STACK) -> None:
        self.stubber.add_response("describe_stacks", answer or stack_answer(), {"StackName": name})

    def __call__(self, *argv: str) -> int:
        out, err = io.StringIO(), io.StringIO()
        aws = AwsClients(self.cloudformation, self.ssm, self.cloudwatch)
        code = main(list(argv), aws=aws, out=out, err=err, now=NOW)
        self.out += out.getvalue()
        self.err += err.getvalue()
        return code


@pytest.fixture
def run(ssm: Any) -> Iterator[Run]:
    runner = Run(ssm)
    yield runner
    runner.stubber.assert_no_pending_responses()


def test_register_sets_the_webhook_with_the_secret_and_the_updates_the_bot_handles(
    run: Run, tg: FakeTelegram
) -> None:
    run.expect_stack()
    assert run("register", "--stack", STACK, "--drop-pending-updates") == 0, run.err

    (call,) = tg.calls("setWebhook")
    assert call.token == TOKEN
    assert call.params["url"] == URL
    assert call.params["secret_token"] == SECRET
    # my_chat_member: the bot learns it was removed from a group. A list replaces Telegram's
    # default set, so it must be named.
    assert call.params["allowed_updates"] == ["message", "callback_query", "my_chat_member"]
    assert call.params["max_connections"] == 40
    assert call.params["drop_pending_updates"] is True
    assert tg.webhook_url == URL
    # It ends by reading back what Telegram now has.
    assert tg.calls("getWebhookInfo")
    assert f"url: {URL}" in run.out
    assert "same as the stack's WebhookUrl: yes" in run.out


def test_register_keeps_pending_updates_unless_asked(run: Run, tg: FakeTelegram) -> None:
    run.expect_stack()
    assert run("register", "--stack", STACK, "--max-connections", "10") == 0, run.err
    (call,) = tg.calls("setWebhook")
    assert "drop_pending_updates" not in call.params
    assert call.params["max_connections"] == 10


def test_register_sets_both_menus_in_english_by_default_and_in_every_other_language(
    run: Run, tg: FakeTelegram
) -> None:
    run.expect_stack()
    assert run("register", "--stack", STACK) == 0, run.err

    menus: dict[tuple[str, str | None], list[dict[str, str]]] = {}
    for call in tg.calls("setMyCommands"):
        key = (call.params["scope"]["type"], call.params.get("language_code"))
        assert key not in menus, f"{key} set twice"
        menus[key] = call.params["commands"]
    languages = [None, *SUPPORTED[1:]]  # None: the default menu, in English
    assert set(menus) == {
        (scope, language)
        for scope in ("all_group_chats", "all_private_chats")
        for language in languages
    }
    assert ("all_group_chats", "fr") in menus, "a French app gets the French menu"
    for language, lang in zip(languages, SUPPORTED, strict=True):
        described = dict(commands(lang))
        group = menus[("all_group_chats", language)]
        private = menus[("all_private_chats", language)]
        assert [c["command"] for c in group] == GROUP
        assert [c["command"] for c in private] == PRIVATE
        for entry in group + private:
            name = "help" if entry["command"] == "start" else entry["command"]
            assert entry["description"] == described[name]
    # Arabic descriptions really are Arabic, French ones French, and English ones English.
    assert re.search("[\u0600-\u06ff]", menus[("all_group_chats", "ar")][0]["description"])
    assert menus[("all_group_chats", "fr")][0]["description"] == "ouvrir une partie dans ce groupe"
    assert menus[("all_group_chats", None)][0]["description"].isascii()


def test_the_group_menu_lists_every_command_the_catalogues_describe() -> None:
    assert set(registration.GROUP_COMMANDS) == set(COMMANDS)


def test_commands_sets_only_the_menus(run: Run, tg: FakeTelegram) -> None:
    run.expect_stack()
    assert run("commands", "--stack", STACK) == 0, run.err
    assert len(tg.calls("setMyCommands")) == 2 * len(SUPPORTED)
    assert not tg.calls("setWebhook")


def test_remove_deletes_the_webhook(run: Run, tg: FakeTelegram) -> None:
    run.expect_stack()
    assert run("register", "--stack", STACK) == 0, run.err
    assert tg.webhook_url == URL

    run.expect_stack()
    assert run("remove", "--stack", STACK, "--drop-pending-updates") == 0, run.err
    (call,) = tg.calls("deleteWebhook")
    assert call.params.get("drop_pending_updates") is True
    assert tg.webhook_url == ""


def test_info_prints_what_telegram_has(run: Run, tg: FakeTelegram) -> None:
    run.expect_stack()
    assert run("info", "--stack", STACK) == 2, run.err
    assert "url: (none: no webhook set)" in run.out
    assert "same as the stack's WebhookUrl: NO" in run.out
    assert "pending updates: 0" in run.out
    assert run.out.splitlines()[-1] == "status: needs a look: no webhook is set"
    assert not tg.calls("setWebhook")


def test_flags_name_the_parameters_and_then_the_stack_is_not_needed(
    ssm: Any, run: Run, tg: FakeTelegram
) -> None:
    ssm.put_parameter(Name="/elsewhere/token", Value=TOKEN, Type="SecureString")
    # No describe_stacks response is queued: a call would fail the Stubber.
    assert run("info", "--token-parameter", "/elsewhere/token") == 2, run.err  # no webhook
    assert tg.calls("getWebhookInfo")[0].token == TOKEN


def test_parameter_names_come_from_the_stack(ssm: Any, run: Run, tg: FakeTelegram) -> None:
    ssm.put_parameter(Name="/custom/token", Value=TOKEN, Type="SecureString")
    ssm.put_parameter(Name="/custom/secret", Value="another-secret", Type="SecureString")
    run.expect_stack(
        stack_answer(
            parameters={
                "BotTokenParameterName": "/custom/token",
                "WebhookSecretParameterName": "/custom/secret",
            }
        )
    )
    assert run("register", "--stack", STACK) == 0, run.err
    assert tg.calls("setWebhook")[0].params["secret_token"] == "another-secret"


def test_a_missing_parameter_says_how_to_create_it(ssm: Any, run: Run, tg: FakeTelegram) -> None:
    ssm.delete_parameter(Name=SECRET_PARAMETER)
    run.expect_stack()
    assert run("register", "--stack", STACK) == 1
    assert SECRET_PARAMETER in run.err
    assert "put-parameter --type SecureString" in run.err
    assert not tg.calls()


def test_a_malformed_secret_is_refused_before_telegram_is_called(
    ssm: Any, run: Run, tg: FakeTelegram
) -> None:
    bad = "has spaces and = signs"
    ssm.put_parameter(Name=SECRET_PARAMETER, Value=bad, Type="SecureString", Overwrite=True)
    run.expect_stack()
    assert run("register", "--stack", STACK) == 1
    assert "generate-secret" in run.err
    assert bad not in run.err + run.out
    assert not tg.calls()


def test_an_unknown_stack_is_explained(run: Run, tg: FakeTelegram) -> None:
    run.stubber.add_client_error(
        "describe_stacks",
        service_error_code="ValidationError",
        service_message="Stack with id nope does not exist",
        expected_params={"StackName": "nope"},
    )
    assert run("register", "--stack", "nope") == 1
    assert "no stack named 'nope'" in run.err
    assert not tg.calls()


def test_a_stack_without_the_output_is_explained(run: Run, tg: FakeTelegram) -> None:
    run.expect_stack(stack_answer(outputs={}))
    assert run("register", "--stack", STACK) == 1
    assert "no WebhookUrl output" in run.err
    assert not tg.calls()


def test_neither_the_token_nor_the_secret_is_ever_printed_or_logged(
    run: Run,
    tg: FakeTelegram,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)  # the worst case: every logger at its most verbose
    # Telegram's error text echoes nothing secret, but the script must redact anyway.
    tg.fail_next("setWebhook", error=bad_request(f"bad webhook: {SECRET} {TOKEN}"))
    for argv in (
        ["register", "--stack", STACK],  # fails at setWebhook
        ["register", "--stack", STACK, "--drop-pending-updates"],
        ["commands", "--stack", STACK],
        ["info", "--stack", STACK],
        ["remove", "--stack", STACK],
    ):
        run.expect_stack()
        run(*argv)
    # And when the Bot API server cannot be reached at all.
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", "http://127.0.0.1:9/bot")
    run.expect_stack()
    assert run("info", "--stack", STACK) == 1

    # python-telegram-bot changes the case of the text: the redaction ignores case.
    assert "error: the Bot API call failed: Bad webhook: *** ***" in run.err
    captured = capsys.readouterr()
    everything = (run.out + run.err + captured.out + captured.err + caplog.text).lower()
    assert len(tg.calls("setWebhook")) == 2
    for value in (TOKEN, TOKEN.split(":")[1], SECRET):
        assert value.lower() not in everything


def test_generate_secret_prints_a_valid_random_secret(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate-secret"]) == 0
    first = capsys.readouterr().out.strip()
    assert main(["generate-secret"]) == 0
    second = capsys.readouterr().out.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{64}", first)
    assert first != second


def test_generate_secret_never_starts_with_a_dash_by_construction() -> None:
    """`--value "$(... generate-secret)"` failed about once in 64 draws: a leading "-" is an
    option to the AWS CLI. The first character is drawn from letters and digits only, so even
    a draw that always takes the last character it is offered (the dash, for the others)
    starts with a letter or digit."""
    last = generate_secret(lambda chars: chars[-1])
    assert last == "9" + "-" * 63
    offered: list[str] = []

    def first_of(chars: str) -> str:
        offered.append(chars)
        return chars[0]

    generate_secret(first_of)
    assert offered[0] == SECRET_FIRST and "-" not in SECRET_FIRST
    assert offered[1:] == [SECRET_ALPHABET] * 63
    draws = [generate_secret() for _ in range(10_000)]
    assert not [d for d in draws if d.startswith("-")]
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{63}", d) for d in draws)
    assert len(set(draws)) == len(draws)


def test_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "infra.telegram_setup", "generate-secret"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"[A-Za-z0-9_-]{64}\n", done.stdout)


# --- info: is the bot healthy? --------------------------------------------------------------


def test_info_on_a_healthy_stack_says_so_one_line_each_and_exits_0(
    run: Run, tg: FakeTelegram
) -> None:
    run.expect_stack()
    assert run("register", "--stack", STACK) == 0, run.err
    run.out = ""
    run.expect_stack()
    assert run("info", "--stack", STACK) == 0, run.err
    lines = run.out.splitlines()
    assert lines[0] == f"url: {URL}"
    assert "  same as the stack's WebhookUrl: yes" in lines
    assert "pending updates: 0" in lines
    assert f"max connections: {registration.MAX_CONNECTIONS}" in lines
    assert f"allowed updates: {', '.join(registration.ALLOWED_UPDATES)}" in lines
    assert "last error: none" in lines
    assert any(
        re.fullmatch(rf"bot token parameter {TOKEN_PARAMETER}: version 1, changed .+", x)
        for x in lines
    )
    assert any(
        re.fullmatch(rf"webhook secret parameter {SECRET_PARAMETER}: version 1, changed .+", x)
        for x in lines
    )
    assert "alarms in ALARM: none" in lines
    assert lines[-1] == "status: ok"


def test_info_names_a_recent_delivery_error_and_the_alarms_in_alarm_and_exits_2(
    ssm: Any, run: Run, tg: FakeTelegram
) -> None:
    run.expect_stack()
    assert run("register", "--stack", STACK) == 0, run.err
    ssm.put_parameter(Name=TOKEN_PARAMETER, Value=TOKEN, Type="SecureString", Overwrite=True)
    tg.webhook_error = (
        int(NOW) - 300,
        "Wrong response from the webhook: 500 Internal Server Error",
    )
    for stack in (STACK, "another-stack"):
        name = f"{stack}-webhook-errors"
        run.cloudwatch.put_metric_alarm(
            AlarmName=name,
            Namespace="AWS/Lambda",
            MetricName="Errors",
            Statistic="Sum",
            Period=300,
            EvaluationPeriods=1,
            Threshold=1,
            ComparisonOperator="GreaterThanOrEqualToThreshold",
        )
        run.cloudwatch.set_alarm_state(AlarmName=name, StateValue="ALARM", StateReason="test")
    run.out = ""
    run.expect_stack()
    assert run("info", "--stack", STACK) == 2, run.err
    lines = run.out.splitlines()
    assert (
        "last error: 2025-12-31 23:55:00 UTC: Wrong response from the webhook: "
        "500 Internal Server Error"
    ) in lines
    assert any(x.startswith(f"bot token parameter {TOKEN_PARAMETER}: version 2") for x in lines)
    firing = [x for x in lines if x.startswith("alarm in ALARM: ")]
    assert len(firing) == 1 and firing[0].startswith(
        f"alarm in ALARM: {STACK}-webhook-errors since "
    )
    assert lines[-1] == (
        "status: needs a look: Telegram failed to deliver an update 5 min ago; 1 alarm(s) in ALARM"
    )


def test_info_takes_an_old_delivery_error_for_history(run: Run, tg: FakeTelegram) -> None:
    run.expect_stack()
    assert run("register", "--stack", STACK) == 0, run.err
    tg.webhook_error = (int(NOW) - 2 * 3600, "Connection timed out")
    run.out = ""
    run.expect_stack()
    assert run("info", "--stack", STACK) == 0, run.err
    assert "last error: 2025-12-31 22:00:00 UTC: Connection timed out" in run.out.splitlines()


def test_info_says_when_the_webhook_is_another_stacks_or_a_parameter_is_gone(
    ssm: Any, run: Run, tg: FakeTelegram
) -> None:
    run.expect_stack(stack_answer(outputs={"WebhookUrl": URL.replace("a1b2", "f9f9")}))
    assert run("register", "--stack", STACK) == 0, run.err
    ssm.delete_parameter(Name=SECRET_PARAMETER)
    run.out = ""
    run.expect_stack()
    assert run("info", "--stack", STACK) == 2, run.err
    lines = run.out.splitlines()
    assert "  same as the stack's WebhookUrl: NO" in lines
    assert f"webhook secret parameter {SECRET_PARAMETER}: MISSING" in lines
    assert lines[-1] == (
        "status: needs a look: the webhook is not this stack's; "
        f"the webhook secret parameter {SECRET_PARAMETER} is missing"
    )


def test_without_a_region_one_line_says_to_set_aws_default_region(tmp_path: Path) -> None:
    """The README sets AWS_DEFAULT_REGION once: the AWS CLI, sam and this script read it.
    AWS_REGION alone (sam ignores it) or saying otherwise is the trap this refuses."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),  # no ~/.aws/config to read a region from
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
    }

    def info(**variables: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "infra.telegram_setup", "info", "--stack", STACK],
            cwd=ROOT,
            env={**env, **variables},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    unset = (
        "error: no AWS region: export AWS_DEFAULT_REGION=<the stack's region> (the AWS CLI, "
        "sam and this script all read it), or pass --region"
    )
    for done, said in (
        (info(), f"{unset}\n"),
        (
            info(AWS_REGION=REGION),
            f"{unset}; AWS_REGION={REGION} is read by the AWS CLI, not by sam\n",
        ),
        (
            info(AWS_REGION="us-east-1", AWS_DEFAULT_REGION=REGION),
            "error: AWS_REGION is us-east-1 but AWS_DEFAULT_REGION (or the profile) says "
            f"{REGION}: the AWS CLI reads the first, sam the second. Unset AWS_REGION, or pass "
            "--region\n",
        ),
    ):
        assert done.returncode == 1
        assert "Traceback" not in done.stderr
        assert done.stderr == said
