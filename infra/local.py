"""Run Menteur on this machine through the same code as Lambda.

    python3 infra/dev.py play [--players N] [--lang en|ar|fr] [--clock S|off] [--name NAME] [--new]
                              [--level easy|normal|hard] [--offline] [--take-webhook]
                              [--data DIR]

Both modes start dynalite (a DynamoDB-compatible server process, from npm) keeping its data
under `.local/dynalite`, create the games table from `template.yaml`, and drive the Lambda
entry points themselves:

- each Telegram update goes to `handlers.webhook.handle` inside a Lambda event (API Gateway's
  HTTP API format, with the secret header of a random per-run secret), and the webhook reply it
  returns (e.g. answerCallbackQuery) is performed through `telegram_io.perform_reply`, since
  there is no HTTP response for Telegram to read it from;
- every second, `handlers.timer.handle` gets a scheduled-rule event, as the one-minute rule
  sends it in AWS; there is no SQS queue locally (`timer_queue_url` is None), so this sweep is
  what moves computer players and lets a final play stand after 45 seconds.

With TELEGRAM_BOT_TOKEN set, the bot runs for real by long polling (`deleteWebhook`, then
`getUpdates` with a timeout): add it to a group and play. A bot whose webhook is set belongs to
a deployed stack, which polling would leave without updates: refused unless --take-webhook.
Without a token (or with --offline), an offline table in the terminal: see `infra/terminal.py`.

Ctrl-C stops it: the step under way (an update, a tick) finishes, then everything this process
started is stopped (the event loop and its HTTP client, the fake Telegram server, dynalite).
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import sys
from dataclasses import replace
from pathlib import Path

from engine import CLOCK_CHOICES, strategy
from handlers import logs
from handlers.config import ConfigError, Settings
from handlers.lobby import clock_choice
from handlers.text import SUPPORTED
from infra import terminal
from infra.dynalite import DynaliteError, FolderInUse
from infra.runner import DATA_DIR, TABLE, Interrupts, serve, shown

# --- the command ---------------------------------------------------------------------------


def _clock(text: str) -> str:
    """--clock: one of R20's choices, as /newgame takes it ("60", "off")."""
    if clock_choice(text) is None:
        choices = ", ".join(str(c) for c in CLOCK_CHOICES if c)
        raise argparse.ArgumentTypeError(f"{text!r}: one of {choices} (seconds), or off")
    return text


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 infra/dev.py play",
        description=(
            "Run Menteur on this machine through the same code as Lambda. With "
            "TELEGRAM_BOT_TOKEN set, the bot plays in your Telegram groups (long polling); "
            "without, an offline table in this terminal against computer players."
        ),
    )
    parser.add_argument(
        "--offline", action="store_true", help="the terminal table even if a token is set"
    )
    parser.add_argument(
        "--take-webhook",
        action="store_true",
        help="with a token: poll even if the bot's webhook (a deployed stack's) is set: removed",
    )
    # Unset unless given: a saved game is resumed as it is, and said to differ from them.
    parser.add_argument(
        "--players",
        type=int,
        default=None,
        choices=range(2, 9),
        metavar="N",
        help="offline: players at the table, you included (2-8, default 4)",
    )
    parser.add_argument(
        "--lang",
        choices=SUPPORTED,
        default=None,
        help=f"offline: the table's language, one of the catalogues' ({', '.join(SUPPORTED)})",
    )
    parser.add_argument(
        "--clock",
        type=_clock,
        default=None,
        metavar="SECONDS|off",
        help="offline: a new game's turn clock (30, 60, 90, 180 or off; default the group's, 90)",
    )
    parser.add_argument(
        "--level",
        choices=tuple(strategy.LEVELS),
        default=None,
        help="offline: the computer players' level (default normal)",
    )
    parser.add_argument("--name", default=None, help="offline: your name at the table")
    parser.add_argument(
        "--new", action="store_true", help="offline: stop the saved game and start a new one"
    )
    parser.add_argument("--seed", type=int, default=None, help="offline: the shuffles' seed")
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA_DIR,
        help="where dynalite keeps the games (default .local/dynalite)",
    )
    return parser.parse_args(argv)


def _configure_logging(path: Path | None, interrupts: Interrupts, token: str) -> None:
    """To a file in the terminal (it would garble the screen), else to stderr. Once Ctrl-C is
    pressed, nothing more: the errors of a step cut short by dynalite's exit are expected.
    The token is hidden from every line, as in Lambda (`handlers.logs`)."""
    handler: logging.Handler
    if path is None:
        handler = logging.StreamHandler()
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(lambda record: not interrupts.stopping_or_pending)
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    logs.configure(logging.INFO, [token])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    token = os.environ.get("TELEGRAM_BOT_TOKEN", "")
    interrupts = Interrupts()
    interrupts.install()
    try:
        if token and not args.offline:
            try:
                settings = Settings.from_env()
            except ConfigError as error:
                sys.exit(str(error))
            _configure_logging(None, interrupts, token)
            # A fresh secret each run: the same check as in Lambda, with nothing to configure.
            settings = replace(
                settings,
                table_name=os.environ.get("TABLE_NAME") or TABLE,
                webhook_secret=secrets.token_urlsafe(32),
            )
            serve(settings, args.data, interrupts, take_webhook=args.take_webhook)
        else:
            _configure_logging(args.data.parent / terminal.OFFLINE_LOG, interrupts, token)
            terminal.play(args, interrupts)
    except KeyboardInterrupt:
        # The `with` blocks have stopped everything on the way out. (The offline table says
        # it in its own language, once it has one.)
        print(f"\nStopped. A game under way is kept in {shown(args.data)}.", flush=True)
    except FolderInUse:
        print(
            f"Another runner is using {shown(args.data)}: stop it, or give this one another "
            "folder with --data DIR.",
            file=sys.stderr,
        )
        return 1
    except DynaliteError as error:
        print(
            f"The local store could not start: {error}\n"
            f"(Is another runner using {shown(args.data)}?)",
            file=sys.stderr,
        )
        return 1
    finally:
        interrupts.restore()
    return 0


if __name__ == "__main__":
    sys.exit(main())
