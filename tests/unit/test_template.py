"""What the template grants and what it tells its IaC check: each function reads only the
secrets it needs, the registration function knows the webhook URL from the template alone,
and every check skipped is skipped where it applies, with its reason in one line."""

from __future__ import annotations

import re
from typing import Any

from infra.table import load_template

TEMPLATE = load_template()
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
FUNCTIONS = {k: v for k, v in RESOURCES.items() if v["Type"] == "AWS::Serverless::Function"}


def environment(function: str) -> dict[str, Any]:
    variables = dict(TEMPLATE["Globals"]["Function"]["Environment"]["Variables"])
    own = FUNCTIONS[function]["Properties"].get("Environment", {}).get("Variables", {})
    return {**variables, **own}


def readable_parameters(function: str) -> set[str]:
    """The SSM parameters (by the template parameter naming them) a function may read."""
    found = set()
    for policy in FUNCTIONS[function]["Properties"]["Policies"]:
        if not (isinstance(policy, dict) and "Ref" in policy):
            continue
        document = RESOURCES[policy["Ref"]]["Properties"]["PolicyDocument"]
        for statement in document["Statement"]:
            if statement["Action"] == "ssm:GetParameter":
                found |= set(re.findall(r"parameter\$\{(\w+)\}", statement["Resource"]["Fn::Sub"]))
    return found


def test_each_function_reads_only_the_secrets_it_needs() -> None:
    token, secret = "BotTokenParameterName", "WebhookSecretParameterName"
    assert readable_parameters("WebhookFunction") == {token, secret}
    assert readable_parameters("RegistrationFunction") == {token, secret}
    assert readable_parameters("TimerFunction") == {token}  # it never checks a request
    assert "TELEGRAM_WEBHOOK_SECRET_PARAMETER" not in environment("TimerFunction")
    assert environment("WebhookFunction")["TELEGRAM_WEBHOOK_SECRET_PARAMETER"] == {"Ref": secret}


def test_the_registration_function_registers_the_url_the_template_computed() -> None:
    url = RESOURCES["TelegramRegistration"]["Properties"]["WebhookUrl"]
    assert environment("RegistrationFunction")["WEBHOOK_URL"] == url
    assert TEMPLATE["Outputs"]["WebhookUrl"]["Value"] == url
    route = FUNCTIONS["WebhookFunction"]["Properties"]["Events"]["Telegram"]["Properties"]
    assert url["Fn::Sub"].endswith(route["Path"])
    assert RESOURCES["TelegramRegistration"]["Properties"]["TakeOverWebhook"] == {
        "Ref": "TakeOverWebhook"
    }
    assert TEMPLATE["Parameters"]["TakeOverWebhook"]["Default"] == "no"


def test_every_skipped_check_is_skipped_where_it_applies_with_its_reason_in_one_line() -> None:
    skipped = 0
    for name, resource in RESOURCES.items():
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", []):
            assert set(skip) == {"id", "comment"}, name
            assert re.fullmatch(r"CKV_AWS_\d+", skip["id"]), (name, skip)
            reason = skip["comment"]
            assert "\n" not in reason and 20 <= len(reason) <= 120, (name, reason)
            assert reason.endswith("."), (name, reason)
            skipped += 1
    assert skipped, "checkov's skips live in the template"
