"""Cold start: what a new Lambda container pays before its first update, next to the floor.

    .venv/bin/python benchmarks/cold_start.py [--pairs 31] [--bot] [--profile]
        [--powertools SITE_PACKAGES]

"Ours" is the webhook function's init as Lambda runs it: `import handlers.webhook` with the
function's environment (template.yaml's variables, local stand-ins for the two secrets), which
builds the container's Runtime at import: settings, the bot with its HTTP client, the event
loop, the store's DynamoDB client, the bot logic. "Floor" is what the chosen dependencies cost
by themselves: `import telegram` and `boto3.client("dynamodb")`. With --bot, a third variant
adds a `telegram.Bot` with its HTTP client to the floor, which any bot that sends must build.

Every run is a fresh interpreter, and every socket connection is refused: init must not touch
the network (in AWS the two secrets are read from SSM during init: two requests, not measured
here). The variants run in pairs, one right after the other, their order flipping from one pair
to the next, so both see the same machine; each pair gives a ratio ours / floor of the times
inside the process (first line to ready: what Lambda's init phase pays). Prints the median of
those ratios with its spread, and the same for CPU time. The goal, <= 1.15, holds reliably when
the upper quartile is within it. On a busy machine (load average above 1) waiting for a core
inflates both sides alike and pulls the wall-clock ratio towards 1: trust the CPU-time ratio
then, or measure again when quiet. When over (or with --profile), ours is split into steps,
medians over as many runs, and the modules imported beyond the floor are listed, heaviest
first (-X importtime).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 1.15

# Any connection attempt fails loudly: a cold start that calls out is a bug here.
NO_NETWORK = """
import socket
def _refuse(self, *args, **kwargs):
    raise OSError("network use during init")
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
"""

# Each prints the seconds it took from its first line to ready, and the CPU seconds of those.
OURS = """
import time
started, cpu = time.perf_counter(), time.process_time()
import handlers.webhook  # builds the Runtime: AWS_LAMBDA_FUNCTION_NAME is set, as in Lambda
ready, cpu = time.perf_counter() - started, time.process_time() - cpu
from handlers.runtime import bootstrap
rt = bootstrap()
assert rt is bootstrap() and rt.store is not None, "built once, at import"
print(ready, cpu)
"""

FLOOR = """
import time
started, cpu = time.perf_counter(), time.process_time()
import telegram
import boto3
boto3.client("dynamodb")
print(time.perf_counter() - started, time.process_time() - cpu)
"""

# Ours, with what AWS Lambda Powertools' Metrics and Logger would add to it (not a dependency:
# --powertools names a folder it is installed in, put after the project's on the path).
OURS_AND_POWERTOOLS = OURS.replace(
    "import handlers.webhook  #",
    "import handlers.webhook\n"
    "from aws_lambda_powertools import Logger, Metrics\n"
    "Metrics(namespace='Menteur', service='menteur'); Logger(service='menteur')  #",
)

FLOOR_AND_BOT = """
import time
started, cpu = time.perf_counter(), time.process_time()
import telegram
import boto3
from telegram.request import HTTPXRequest
boto3.client("dynamodb")
request = HTTPXRequest()
telegram.Bot("123456:COLD-START-DUMMY-TOKEN", request=request, get_updates_request=request)
print(time.perf_counter() - started, time.process_time() - cpu)
"""

# Ours, step by step (the Runtime built by hand, as handlers.webhook builds it).
STEPS = """
import time
marks = [time.perf_counter()]
import telegram, boto3
client = boto3.client("dynamodb")
marks.append(time.perf_counter())
import engine
marks.append(time.perf_counter())
import handlers.webhook
marks.append(time.perf_counter())
import httpcore
marks.append(time.perf_counter())
from handlers import telegram_io
from handlers.config import Settings
settings = Settings.from_env()
bot = telegram_io.make_bot(settings.bot_token, settings.api_base_url)
marks.append(time.perf_counter())
from handlers.runtime import Runtime
from handlers.dynamo import DynamoStore
Runtime(settings, bot=bot, store=DynamoStore(client, settings.table_name))
marks.append(time.perf_counter())
print(*(b - a for a, b in zip(marks, marks[1:])))
"""
STEP_NAMES = (
    "the floor: import telegram, boto3; boto3.client('dynamodb')",
    "import engine",
    "import handlers.webhook, the rest of handlers (no Runtime yet)",
    "import httpcore (with h11, anyio): httpx imports it for its first client",
    "the bot and its HTTP client: a TLS context, loading the CA bundle",
    "the rest of the Runtime (event loop, timers, store, MenteurBot)",
)

ENVIRONMENT = {
    # What template.yaml gives the function, with local stand-ins for the secrets (in AWS they
    # are read from SSM: TELEGRAM_BOT_TOKEN_PARAMETER, TELEGRAM_WEBHOOK_SECRET_PARAMETER).
    "AWS_LAMBDA_FUNCTION_NAME": "menteur-webhook-cold-start",
    "TABLE_NAME": "menteur-games",
    "TELEGRAM_BOT_TOKEN": "123456:COLD-START-DUMMY-TOKEN",
    "TELEGRAM_WEBHOOK_SECRET": "cold-start",
    "TIMER_QUEUE_URL": "https://sqs.eu-west-1.amazonaws.com/123456789012/menteur-timers",
    "IDLE_EXPIRY_SECONDS": "86400",
    "LOG_LEVEL": "INFO",
    "PTB_TIMEDELTA": "true",
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9",  # never called: the connection would be refused
    "AWS_ACCESS_KEY_ID": "cold",
    "AWS_SECRET_ACCESS_KEY": "cold",
    "AWS_DEFAULT_REGION": "eu-west-1",
    "AWS_REGION": "eu-west-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "PYTHONPATH": str(ROOT),
    "PYTHONDONTWRITEBYTECODE": "",  # bytecode caches exist in a deployed artifact too
}


def environment(building: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TELEGRAM_"))}
    env.update(ENVIRONMENT)
    if not building:
        env.pop("AWS_LAMBDA_FUNCTION_NAME")
    return {k: v for k, v in env.items() if v}


def run_once(code: str, *flags: str, building: bool = True) -> tuple[list[float], float, str]:
    """(the numbers the process printed, seconds of the whole process, its stderr)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *flags, "-c", NO_NETWORK + code],
        cwd=ROOT,
        env=environment(building),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the cold start failed:\n{done.stderr}")
    return [float(x) for x in done.stdout.split()], wall, done.stderr


def import_times(code: str) -> dict[str, tuple[int, int]]:
    """module → (self µs, cumulative µs), from python -X importtime."""
    _, _, stderr = run_once(code, "-X", "importtime")
    found = {}
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)", line)
        if match:
            found[match[4]] = (int(match[1]), int(match[2]))
    return found


def ratio(times: dict[str, list[float]], name: str, base: str) -> list[float]:
    """Run by run: each run of `name` over the run of `base` next to it."""
    return [a / b for a, b in zip(times[name], times[base], strict=True)]


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=31, help="runs of each variant")
    parser.add_argument("--bot", action="store_true", help="add the floor + a telegram.Bot")
    parser.add_argument("--profile", action="store_true", help="split ours into steps anyway")
    parser.add_argument(
        "--powertools",
        metavar="SITE_PACKAGES",
        help="add ours + Powertools' Metrics and Logger, installed in this folder",
    )
    args = parser.parse_args()

    variants = {"floor": FLOOR, "ours": OURS}
    if args.bot:
        variants["floor + bot"] = FLOOR_AND_BOT
    if args.powertools:
        ENVIRONMENT["PYTHONPATH"] += os.pathsep + args.powertools
        variants["ours + powertools"] = OURS_AND_POWERTOOLS
    for code in variants.values():
        run_once(code)  # warm the file cache and write bytecode, for all
    inside: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    whole: dict[str, list[float]] = {name: [] for name in variants}
    load = os.getloadavg()[0]
    names = list(variants)
    for i in range(args.pairs):
        for name in names[i % len(names) :] + names[: i % len(names)]:  # each goes first in turn
            printed, wall, _ = run_once(variants[name])
            inside[name].append(printed[0] * 1000)
            cpu[name].append(printed[1] * 1000)
            whole[name].append(wall * 1000)

    print(
        f"{args.pairs} runs of each, alternated, a fresh interpreter each; load average "
        f"{load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end"
    )
    labels = {
        "floor": "floor (import telegram + boto3.client('dynamodb'))",
        "floor + bot": "floor + a telegram.Bot with its HTTP client",
        "ours": "ours (import handlers.webhook, Runtime built)",
        "ours + powertools": "ours + Powertools' Metrics and Logger",
    }
    for name in variants:
        print(
            f"  {labels[name]:52} medians: {statistics.median(inside[name]):6.1f} ms inside the "
            f"process ({statistics.median(cpu[name]):6.1f} ms of CPU), "
            f"{statistics.median(whole[name]):6.1f} ms whole process"
        )
    comparisons = [("ours", "floor")]
    if args.bot:
        comparisons += [("floor + bot", "floor"), ("ours", "floor + bot")]
    if args.powertools:
        comparisons += [("ours + powertools", "ours")]
    over = False
    for name, base in comparisons:
        ratios = ratio(inside, name, base)
        q1, median, q3 = quartiles(ratios)
        within = sum(r <= GOAL for r in ratios)
        whole_ratio = statistics.median(ratio(whole, name, base))
        cpu_q1, cpu_median, cpu_q3 = quartiles(ratio(cpu, name, base))
        print(
            f"{name} / {base}, run by run: median {median:.3f}, quartiles {q1:.3f}-{q3:.3f}, "
            f"min {min(ratios):.3f}, max {max(ratios):.3f}; {within} of {len(ratios)} <= {GOAL}\n"
            f"  CPU time: median {cpu_median:.3f}, quartiles {cpu_q1:.3f}-{cpu_q3:.3f} (steadier "
            f"on a busy machine); whole processes: median {whole_ratio:.3f}"
        )
        if (name, base) == ("ours", "floor"):
            over = q3 > GOAL
            verdict = "over" if median > GOAL else "within, not reliably" if over else "reliably"
            print(f"  goal <= {GOAL:.2f}: {verdict} (reliably: the upper quartile within)")
            if max(load, os.getloadavg()[0]) > 1:
                print("  the machine was busy (load average above 1): see the CPU-time ratio")
    if over or args.profile:
        steps(args.pairs)
        heavy(import_times(OURS), import_times(FLOOR))


def steps(runs: int) -> None:
    measured = [run_once(STEPS, building=False)[0] for _ in range(runs)]
    print("ours, step by step (medians):")
    for i, name in enumerate(STEP_NAMES):
        print(f"  {statistics.median(m[i] for m in measured) * 1000:6.1f} ms  {name}")


def heavy(ours: dict[str, tuple[int, int]], floor: dict[str, tuple[int, int]]) -> None:
    extra = {name: t for name, t in ours.items() if name not in floor}
    total = sum(self_us for self_us, _ in extra.values())
    print(f"modules imported beyond the floor: {len(extra)}, {total / 1000:.0f} ms of their own")
    print("  (handlers.webhook's own time includes building the Runtime: it happens at import)")
    for name, (self_us, cumulative) in sorted(extra.items(), key=lambda kv: -kv[1][0])[:12]:
        print(f"  {self_us / 1000:7.1f} ms own, {cumulative / 1000:7.1f} ms with imports  {name}")


if __name__ == "__main__":
    main()
