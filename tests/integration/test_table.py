"""The games table and timer queue built from template.yaml: on moto, on dynalite, and the
template's own promises (arm64, secrets only in SSM, each function reading only the secrets it
needs, TTL, PITR, every skip of its IaC check explained)."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from handlers import custom_resource
from infra.dynalite import Dynalite, FolderInUse
from infra.table import (
    TEMPLATE,
    create_queue,
    create_table,
    load_template,
    queue_spec,
    table_spec,
    ttl_attribute,
)

REGION = "us-east-1"
GAME_FUNCTIONS = ("WebhookFunction", "TimerFunction")
FUNCTIONS = (*GAME_FUNCTIONS, "RegistrationFunction")
SECRET_PARAMETERS = ("BotTokenParameterName", "WebhookSecretParameterName")

needs_node = pytest.mark.skipif(
    shutil.which("node") is None, reason="Node.js (`node`) is not on PATH: dynalite cannot run"
)


@pytest.fixture
def template() -> dict[str, Any]:
    return load_template()


def _function(template: dict[str, Any], name: str) -> dict[str, Any]:
    """A function's properties with the template's Globals merged in, as SAM does (the
    environment's variables merged one by one)."""
    globals_: dict[str, Any] = template.get("Globals", {}).get("Function", {})
    own = template["Resources"][name]["Properties"]
    merged: dict[str, Any] = {**globals_, **own}
    variables = {
        **globals_.get("Environment", {}).get("Variables", {}),
        **own.get("Environment", {}).get("Variables", {}),
    }
    merged["Environment"] = {"Variables": variables}
    return merged


def _readable_parameters(template: dict[str, Any], name: str) -> set[str]:
    """The SSM parameters (the template parameters naming them) a function may read."""
    found = set()
    for policy in template["Resources"][name]["Properties"]["Policies"]:
        if isinstance(policy, dict) and "Ref" in policy:
            document = template["Resources"][policy["Ref"]]["Properties"]["PolicyDocument"]
            for statement in document["Statement"]:
                if statement["Action"] == "ssm:GetParameter":
                    arn = statement["Resource"]["Fn::Sub"]
                    found |= set(re.findall(r"parameter\$\{(\w+)\}", arn))
    return found


def _statements(template: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every IAM statement the template grants: managed policies and functions' inline ones."""
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::IAM::ManagedPolicy":
            yield from resource["Properties"]["PolicyDocument"]["Statement"]
        if resource["Type"] == "AWS::Serverless::Function":
            for policy in resource["Properties"].get("Policies", []):
                if isinstance(policy, dict) and "Statement" in policy:
                    yield from policy["Statement"]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


# --- the template's promises -----------------------------------------------------------------


def test_functions_run_python_3_12_or_newer_on_arm64(template):
    for name in FUNCTIONS:
        function = _function(template, name)
        assert function["Architectures"] == ["arm64"]
        match = re.fullmatch(r"python3\.(\d+)", function["Runtime"])
        assert match is not None and int(match.group(1)) >= 12
        assert function["CodeUri"] == "."
        assert template["Resources"][name]["Metadata"]["BuildMethod"] == "makefile"
        assert "ReservedConcurrentExecutions" not in function


def test_handlers_and_timeouts_are_the_designed_ones(template):
    webhook = _function(template, "WebhookFunction")
    timer = _function(template, "TimerFunction")
    registration = _function(template, "RegistrationFunction")
    assert webhook["Handler"] == "handlers.webhook.lambda_handler"
    assert timer["Handler"] == "handlers.timer.lambda_handler"
    assert registration["Handler"] == "handlers.custom_resource.lambda_handler"
    assert webhook["Timeout"] == 15
    assert timer["Timeout"] == 30
    # The custom resource answers CloudFormation with time to spare before its own timeout.
    assert registration["Timeout"] - custom_resource.ANSWER_RESERVE >= 30


def test_no_secret_is_in_the_environment_only_the_names_of_its_parameters(template):
    for name in FUNCTIONS:
        variables = _function(template, name)["Environment"]["Variables"]
        assert "TELEGRAM_BOT_TOKEN" not in variables
        assert "TELEGRAM_WEBHOOK_SECRET" not in variables
        assert variables["TELEGRAM_BOT_TOKEN_PARAMETER"] == {"Ref": "BotTokenParameterName"}
        assert set(variables) >= {"TABLE_NAME", "TIMER_QUEUE_URL", "IDLE_EXPIRY_SECONDS"}
    # Only the webhook checks the secret; the registration reads it from its request's names.
    secret = {
        name
        for name in FUNCTIONS
        if "TELEGRAM_WEBHOOK_SECRET_PARAMETER"
        in _function(template, name)["Environment"]["Variables"]
    }
    assert secret == {"WebhookFunction"}
    webhook = _function(template, "WebhookFunction")["Environment"]["Variables"]
    assert webhook["TELEGRAM_WEBHOOK_SECRET_PARAMETER"] == {"Ref": "WebhookSecretParameterName"}
    for parameter in SECRET_PARAMETERS:
        assert template["Parameters"][parameter]["Default"].startswith("/")
    # Nothing shaped like a bot token (digits:35 characters) anywhere in the file.
    assert not re.search(r"\d{6,}:[A-Za-z0-9_-]{30,}", TEMPLATE.read_text())


def test_ssm_read_is_scoped_to_exactly_the_two_parameters(template):
    ssm = [s for s in _statements(template) if any("ssm:" in a for a in _as_list(s["Action"]))]
    assert ssm, "no statement grants SSM access"
    resources: list[Any] = []
    for statement in ssm:
        assert _as_list(statement["Action"]) == ["ssm:GetParameter"]
        resources += _as_list(statement["Resource"])
    arn = "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter"
    expected = [{"Fn::Sub": arn + "${" + p + "}"} for p in SECRET_PARAMETERS]
    assert sorted(map(json.dumps, resources)) == sorted(map(json.dumps, expected))
    # The SecureString is decrypted only through SSM.
    kms = [s for s in _statements(template) if "kms:Decrypt" in _as_list(s["Action"])]
    assert kms
    for statement in kms:
        condition = statement["Condition"]["StringEquals"]["kms:ViaService"]
        assert condition == {"Fn::Sub": "ssm.${AWS::Region}.amazonaws.com"}
    # Each function reads only the secrets it needs: the timer never sees the webhook's secret.
    token, secret = SECRET_PARAMETERS
    assert _readable_parameters(template, "WebhookFunction") == {token, secret}
    assert _readable_parameters(template, "RegistrationFunction") == {token, secret}
    assert _readable_parameters(template, "TimerFunction") == {token}
    # Nothing else grants SSM or KMS.
    for name in FUNCTIONS:
        policies = template["Resources"][name]["Properties"]["Policies"]
        assert not any("SSM" in str(p) or "KMS" in str(p) for p in policies if "Ref" not in p)


def _dynamodb_grants(template: dict[str, Any], name: str) -> list[tuple[list[str], Any]]:
    """(actions, resource) of every DynamoDB statement a function's policies grant."""
    resources = template["Resources"]
    found = []
    for policy in resources[name]["Properties"]["Policies"]:
        assert isinstance(policy, dict), policy
        if "Ref" in policy:
            statements = resources[policy["Ref"]]["Properties"]["PolicyDocument"]["Statement"]
        else:
            statements = policy.get("Statement", [])
            # SAM's policy templates: none may reach DynamoDB (DynamoDBCrudPolicy grants Scan,
            # BatchWriteItem, the whole index set...).
            assert not any("DynamoDB" in key for key in policy), policy
        for statement in statements:
            actions = _as_list(statement["Action"])
            if any(a.startswith("dynamodb:") for a in actions):
                assert statement["Effect"] == "Allow"
                found.append((sorted(actions), statement["Resource"]))
    return found


def test_each_function_may_make_only_the_dynamodb_calls_its_code_makes(template):
    # handlers/dynamo.py: load (GetItem; BatchGetItem for a forum topic's record and its chat's
    # own item, with the flood budget, GetItem for a key it left unread), apply (UpdateItem),
    # move (GetItem, PutItem, DeleteItem: either function may learn while sending that a group
    # became a supergroup), overdue (Query on DueIndex: the timer's sweep).
    items = (
        [
            "dynamodb:BatchGetItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
        ],
        {"Fn::GetAtt": ["GamesTable", "Arn"]},
    )
    index = (["dynamodb:Query"], {"Fn::Sub": "${GamesTable.Arn}/index/DueIndex"})
    assert _dynamodb_grants(template, "WebhookFunction") == [items]
    assert sorted(map(json.dumps, _dynamodb_grants(template, "TimerFunction"))) == sorted(
        map(json.dumps, [items, index])
    )
    assert _dynamodb_grants(template, "RegistrationFunction") == []
    # The index the grant names is the one the store queries.
    (index_spec,) = template["Resources"]["GamesTable"]["Properties"]["GlobalSecondaryIndexes"]
    assert index_spec["IndexName"] == "DueIndex"


def test_functions_reach_only_the_games_table_and_the_timer_queue(template):
    for name in GAME_FUNCTIONS:
        policies = template["Resources"][name]["Properties"]["Policies"]
        assert {"Ref": "GamesTableItemsPolicy"} in policies
        assert {
            "SQSSendMessagePolicy": {"QueueName": {"Fn::GetAtt": ["TimerQueue", "QueueName"]}}
        } in policies
    # The custom resource reads the two parameters and talks to Telegram: nothing else.
    policies = template["Resources"]["RegistrationFunction"]["Properties"]["Policies"]
    assert policies == [{"Ref": "BotTokenReadPolicy"}, {"Ref": "WebhookSecretReadPolicy"}]


def test_the_custom_resource_registers_the_stack_and_changes_with_what_it_registers(template):
    resource = template["Resources"]["TelegramRegistration"]
    assert resource["Type"].startswith("Custom::")
    assert resource["DependsOn"] == "WebhookFunction"
    properties = resource["Properties"]
    assert properties["ServiceToken"] == {"Fn::GetAtt": ["RegistrationFunction", "Arn"]}
    assert 60 < properties["ServiceTimeout"] <= 3600
    # The URL registered is the one the stack reports, and the function registers it from its
    # environment, never from a request; a Create takes another's webhook only when told to.
    assert properties["WebhookUrl"] == template["Outputs"]["WebhookUrl"]["Value"]
    variables = _function(template, "RegistrationFunction")["Environment"]["Variables"]
    assert variables["WEBHOOK_URL"] == properties["WebhookUrl"]
    route = _function(template, "WebhookFunction")["Events"]["Telegram"]["Properties"]
    assert properties["WebhookUrl"]["Fn::Sub"].endswith(route["Path"])
    assert properties["TakeOverWebhook"] == {"Ref": "TakeOverWebhook"}
    assert template["Parameters"]["TakeOverWebhook"]["Default"] == "no"
    for parameter in SECRET_PARAMETERS:
        assert properties[parameter] == {"Ref": parameter}
    # An Update (a new registration) when the operator rotates the secrets or the code changes.
    assert properties["SecretsRevision"] == {"Ref": "SecretsRevision"}
    assert properties["CodeVersion"] == {"Ref": "RegistrationFunction.Version"}
    assert _function(template, "RegistrationFunction")["AutoPublishAlias"]
    # And a new SecretsRevision restarts every function, so that they read the new values.
    for name in FUNCTIONS:
        variables = _function(template, name)["Environment"]["Variables"]
        assert variables["SECRETS_REVISION"] == {"Ref": "SecretsRevision"}


def test_every_skipped_check_is_skipped_where_it_applies_with_its_reason_in_one_line(template):
    """checkov (the test command runs it) skips a check only in the resource it concerns."""
    skipped = 0
    for name, resource in template["Resources"].items():
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", []):
            assert set(skip) == {"id", "comment"}, name
            assert re.fullmatch(r"CKV_AWS_\d+", skip["id"]), (name, skip)
            reason = skip["comment"]
            assert "\n" not in reason and 20 <= len(reason) <= 120, (name, reason)
            assert reason.endswith("."), (name, reason)
            skipped += 1
    assert skipped == 20, "docs/deploying.md (The template's checks) counts them"


def test_every_function_has_a_build_target_in_the_makefile(template):
    built = {
        name
        for name, resource in template["Resources"].items()
        if resource.get("Metadata", {}).get("BuildMethod") == "makefile"
    }
    assert built == set(FUNCTIONS)
    makefile = (TEMPLATE.parent / "Makefile").read_text()
    rules = re.findall(r"^((?:build-\w+ ?)+):", makefile, re.MULTILINE)
    targets = {target for rule in rules for target in rule.split()}
    assert {f"build-{name}" for name in built} <= targets


def test_table_has_ttl_point_in_time_recovery_and_encryption(template):
    table = template["Resources"]["GamesTable"]
    properties = table["Properties"]
    assert properties["TimeToLiveSpecification"] == {"AttributeName": "expires", "Enabled": True}
    assert properties["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert properties["SSESpecification"]["SSEEnabled"] is True
    assert properties["BillingMode"] == "PAY_PER_REQUEST"
    assert ttl_attribute() == "expires"


def test_a_failed_first_deploy_leaves_no_table_and_a_deleted_stack_keeps_its_games(template):
    """`Retain` kept the table of a first deploy that failed after making it (a missing SSM
    parameter, say), and each retry could leave another. CloudFormation deletes a table it
    created in the same failed operation under `RetainExceptOnCreate`, and keeps it otherwise:
    on `sam delete`, and when an update would replace it."""
    table = template["Resources"]["GamesTable"]
    assert table["DeletionPolicy"] == "RetainExceptOnCreate"
    assert table["UpdateReplacePolicy"] == "Retain"


def test_timer_queue_outlasts_its_function_and_has_a_dead_letter_queue(template):
    queue = template["Resources"]["TimerQueue"]["Properties"]
    assert queue["VisibilityTimeout"] >= 6 * _function(template, "TimerFunction")["Timeout"]
    assert queue["RedrivePolicy"]["maxReceiveCount"] == 5
    assert queue["SqsManagedSseEnabled"] is True
    events = template["Resources"]["TimerFunction"]["Properties"]["Events"]
    sqs = next(e["Properties"] for e in events.values() if e["Type"] == "SQS")
    assert sqs["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    schedule = next(e["Properties"] for e in events.values() if e["Type"] == "Schedule")
    assert schedule["Schedule"] == "rate(1 minute)"


def test_logs_are_kept_for_the_configured_number_of_days(template):
    resources = template["Resources"]
    for name in FUNCTIONS:
        group = _function(template, name)["LoggingConfig"]["LogGroup"]["Ref"]
        assert resources[group]["Type"] == "AWS::Logs::LogGroup"
        assert resources[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    assert template["Parameters"]["LogRetentionDays"]["Default"] == 30


def test_webhook_api_is_throttled(template):
    api = template["Resources"]["WebhookApi"]
    assert api["Type"] == "AWS::Serverless::HttpApi"
    settings = api["Properties"]["DefaultRouteSettings"]
    assert 0 < settings["ThrottlingBurstLimit"] <= 100
    assert 0 < settings["ThrottlingRateLimit"] <= 50
    event = template["Resources"]["WebhookFunction"]["Properties"]["Events"]["Telegram"]
    assert event["Properties"]["Method"] == "POST"
    assert event["Properties"]["Path"] == "/webhook"


def test_table_spec_is_plain_create_table_arguments():
    spec = table_spec()
    assert set(spec) == {
        "AttributeDefinitions",
        "KeySchema",
        "BillingMode",
        "GlobalSecondaryIndexes",
    }
    assert spec["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    (index,) = spec["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "DueIndex"
    assert index["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert "Ref" not in json.dumps(spec) and "Fn::" not in json.dumps(spec)


def test_short_form_tags_are_read_as_their_long_form(tmp_path):
    path = tmp_path / "template.yaml"
    path.write_text(
        "Resources:\n"
        "  Q:\n"
        "    Type: AWS::SQS::Queue\n"
        "    Properties:\n"
        "      A: !Ref X\n"
        "      B: !GetAtt R.Arn\n"
        "      C: !Sub ['a${b}', {b: !Ref Y}]\n"
        "      D: !Join ['', [a, b]]\n"
    )
    properties = load_template(path)["Resources"]["Q"]["Properties"]
    assert properties == {
        "A": {"Ref": "X"},
        "B": {"Fn::GetAtt": ["R", "Arn"]},
        "C": {"Fn::Sub": ["a${b}", {"b": {"Ref": "Y"}}]},
        "D": {"Fn::Join": ["", ["a", "b"]]},
    }


# --- moto ------------------------------------------------------------------------------------


def test_moto_table_is_built_from_the_template(aws_env):
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        create_table(client, "games")
        create_table(client, "games")  # idempotent
        table = client.describe_table(TableName="games")["Table"]
        assert table["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        (index,) = table["GlobalSecondaryIndexes"]
        assert index["IndexName"] == "DueIndex"
        assert index["KeySchema"] == [
            {"AttributeName": "shard", "KeyType": "HASH"},
            {"AttributeName": "due", "KeyType": "RANGE"},
        ]
        assert index["Projection"]["ProjectionType"] == "KEYS_ONLY"
        types = {a["AttributeName"]: a["AttributeType"] for a in table["AttributeDefinitions"]}
        assert types == {"pk": "S", "shard": "S", "due": "N"}
        ttl = client.describe_time_to_live(TableName="games")["TimeToLiveDescription"]
        assert ttl["TimeToLiveStatus"] == "ENABLED"
        assert ttl["AttributeName"] == "expires"


def test_moto_timer_queue_is_built_from_the_template(aws_env):
    assert queue_spec()["VisibilityTimeout"] == "180"
    with mock_aws():
        sqs = boto3.client("sqs", region_name=REGION)
        url = create_queue(sqs, "timers")
        assert create_queue(sqs, "timers") == url  # idempotent
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert attributes["VisibilityTimeout"] == "180"
        assert attributes["DelaySeconds"] == "0"  # each timer sets its own delay
        redrive = json.loads(attributes["RedrivePolicy"])
        assert redrive["maxReceiveCount"] == 5
        assert redrive["deadLetterTargetArn"].endswith(":timers-dlq")


# --- dynalite --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dynalite() -> Iterator[Dynalite]:
    if shutil.which("node") is None:
        pytest.skip("Node.js (`node`) is not on PATH: dynalite cannot run")
    with Dynalite() as server:
        yield server


@needs_node
def test_dynalite_serialises_racing_conditional_writes(dynalite):
    writers, rounds = 8, 50
    create_table(dynalite.client(), "race")
    clients = [dynalite.client() for _ in range(writers)]
    key = {"pk": {"S": "chat#1"}}
    clients[0].put_item(TableName="race", Item={**key, "version": {"N": "0"}})
    winners: list[list[int]] = [[] for _ in range(rounds)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(writers, timeout=30)

    def write(writer: int) -> None:
        client = clients[writer]
        for round_index in range(rounds):
            barrier.wait()
            expected = {":expected": {"N": str(round_index)}}
            try:
                if writer % 2:
                    client.update_item(
                        TableName="race",
                        Key=key,
                        UpdateExpression="SET version = :next, winner = :me",
                        ConditionExpression="version = :expected",
                        ExpressionAttributeValues={
                            **expected,
                            ":next": {"N": str(round_index + 1)},
                            ":me": {"N": str(writer)},
                        },
                    )
                else:
                    client.put_item(
                        TableName="race",
                        Item={
                            **key,
                            "version": {"N": str(round_index + 1)},
                            "winner": {"N": str(writer)},
                        },
                        ConditionExpression="version = :expected",
                        ExpressionAttributeValues=expected,
                    )
            except client.exceptions.ConditionalCheckFailedException:
                continue
            except BaseException as error:
                errors.append(error)
                barrier.abort()
                raise
            winners[round_index].append(writer)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert [len(w) for w in winners] == [1] * rounds
    item = clients[0].get_item(TableName="race", Key=key, ConsistentRead=True)["Item"]
    assert item["version"] == {"N": str(rounds)}
    assert item["winner"] == {"N": str(winners[-1][0])}


@needs_node
def test_dynalite_due_index_holds_only_games_with_a_pending_timer(dynalite):
    client = dynalite.client()
    create_table(client, "due")
    client.put_item(TableName="due", Item={"pk": {"S": "idle"}})
    for pk, due in (("soon", 100), ("later", 200), ("now", 50)):
        client.put_item(
            TableName="due",
            Item={"pk": {"S": pk}, "shard": {"S": "0"}, "due": {"N": str(due)}},
        )
    found = client.query(
        TableName="due",
        IndexName="DueIndex",
        # `shard` is one of DynamoDB's reserved words: it needs an alias in expressions.
        KeyConditionExpression="#shard = :shard AND due <= :now",
        ExpressionAttributeNames={"#shard": "shard"},
        ExpressionAttributeValues={":shard": {"S": "0"}, ":now": {"N": "150"}},
    )["Items"]
    assert [item["pk"]["S"] for item in found] == ["now", "soon"]


@needs_node
def test_dynalite_keeps_its_data_across_a_restart(tmp_path):
    with Dynalite(path=tmp_path / "db") as server:
        create_table(server.client(), "games")
        server.client().put_item(
            TableName="games", Item={"pk": {"S": "chat#7"}, "version": {"N": "3"}}
        )
        server.restart()
        client = server.client()
        create_table(client, "games")  # the table is still there: accepted as it is
        item = client.get_item(TableName="games", Key={"pk": {"S": "chat#7"}})["Item"]
        assert item["version"] == {"N": "3"}
    with Dynalite(path=tmp_path / "db") as server:  # a new process, a new port
        item = server.client().get_item(TableName="games", Key={"pk": {"S": "chat#7"}})["Item"]
        assert item["version"] == {"N": "3"}


@needs_node
def test_dynalite_stops_even_when_the_block_raises():
    with pytest.raises(RuntimeError, match="boom"), Dynalite() as server:
        process = server._process
        assert process is not None and server.running
        raise RuntimeError("boom")
    assert process is not None and process.poll() is not None
    assert not server.running


@needs_node
@pytest.mark.skipif(os.name != "posix", reason="the folder's lock is POSIX's flock")
def test_a_second_dynalite_on_the_same_folder_is_refused_before_it_starts(tmp_path):
    with Dynalite(path=tmp_path / "db") as first:
        second = Dynalite(path=tmp_path / "db")
        with pytest.raises(FolderInUse) as refused:
            second.start()
        assert refused.value.path == tmp_path / "db"
        assert second._process is None, "no second server was spawned"
        assert first.running
    # Once the first is stopped, the folder is free again.
    with Dynalite(path=tmp_path / "db") as again:
        assert again.running


@needs_node
@pytest.mark.skipif(os.name != "posix", reason="the folder's lock is POSIX's flock")
def test_a_dynalite_left_running_by_a_dead_runner_is_stopped_by_the_next_one(tmp_path):
    orphan = Dynalite(path=tmp_path / "db").start()
    try:
        create_table(orphan.client(), "games")
        orphan.client().put_item(TableName="games", Item={"pk": {"S": "chat#7"}})
        # The runner dies without stopping it: the system releases the folder's lock, and the
        # server goes on, holding LevelDB's.
        assert orphan._lock is not None and orphan._process is not None
        orphan._lock.close()
        left = orphan._process
        with Dynalite(path=tmp_path / "db") as server:
            assert server.stopped_orphan == left.pid
            assert left.wait(timeout=5) is not None
            item = server.client().get_item(TableName="games", Key={"pk": {"S": "chat#7"}})
            assert item["Item"] == {"pk": {"S": "chat#7"}}, "the data, served by the new one"
        # A pid file naming some other process (the pid given again since) stops nothing.
        (tmp_path / "db" / "dynalite.pid").write_text(str(os.getpid()))
        later = Dynalite(path=tmp_path / "db")
        later._stop_orphan(tmp_path / "db")
        assert later.stopped_orphan is None
    finally:
        orphan._lock = None
        orphan.stop()
