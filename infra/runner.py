"""The local runner's machinery: the Lambda entry points driven on one machine.

`LocalBot` holds one `Runtime` on dynalite and hands it Lambda-format events: each Telegram
update to `handlers.webhook.handle` (performing the webhook reply itself, since no HTTP
response carries it to Telegram) and, every second, a scheduled-rule event to
`handlers.timer.handle`; `resume` gives a game found running when the runner starts its
deadlines afresh (the time the runner was off was nobody's to play). `Poller` feeds it from
`getUpdates`; `serve` runs the real bot by long polling; `Interrupts` turns Ctrl-C into a clean
stop. `infra/local.py` is the command, `infra/terminal.py` the offline table.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import json
import logging
import random
import signal
import sys
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Self

from botocore.exceptions import BotoCoreError, ClientError
from telegram.error import Conflict, InvalidToken, NetworkError, TelegramError
from telegram.warnings import PTBUserWarning

from engine import DECISION_SECONDS, UNTIMED_TURN, Phase
from handlers import item, questions, registration, telegram_io, timer, timing, webhook
from handlers.config import Settings
from handlers.dynamo import DynamoStore
from handlers.runtime import Runtime
from infra.dynalite import REGION, Dynalite, DynaliteError
from infra.table import create_table

ROOT = Path(__file__).resolve().parent.parent
LOCAL_DIR = ROOT / ".local"  # git-ignored
DATA_DIR = LOCAL_DIR / "dynalite"
TABLE = "menteur-games"  # the real bot's games (TABLE_NAME overrides)
OFFLINE_TABLE = "menteur-offline"  # the terminal's: its fake group never mixes with real ones
TICK_SECONDS = 1.0  # the timer's sweep, in place of the one-minute scheduled rule
POLL_TIMEOUT = 1  # seconds a getUpdates waits for an update: a tick comes after each poll
RETRY_PAUSE = 2.0  # after a network error, or an update the handler asked to have again
BAD_TOKEN = "Telegram refused TELEGRAM_BOT_TOKEN: check it with @BotFather."
TELEGRAM_API = "https://api.telegram.org"  # Telegram's Bot API, where no base URL is set
ANSWER_SHOWN = 200  # characters of a server's answer quoted in the runner's one line
LOGGER = logging.getLogger("menteur.local")


# --- the events Lambda receives --------------------------------------------------------------


def _iso(now: float) -> str:
    return dtm.datetime.fromtimestamp(now, dtm.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def webhook_event(update: Mapping[str, Any], secret: str, now: float) -> dict[str, Any]:
    """Telegram's POST of `update` as the webhook function receives it: an HTTP API (payload
    format 2.0) event, headers in lower case, the body the JSON text Telegram sends."""
    body = json.dumps(update, ensure_ascii=False, separators=(",", ":"))
    return {
        "version": "2.0",
        "routeKey": "POST /webhook",
        "rawPath": "/webhook",
        "rawQueryString": "",
        "headers": {
            "content-length": str(len(body.encode())),
            "content-type": "application/json",
            "host": "localhost",
            webhook.SECRET_HEADER: secret,
        },
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": "localhost",
            "domainPrefix": "localhost",
            "http": {
                "method": "POST",
                "path": "/webhook",
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": "menteur-local",
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": "POST /webhook",
            "stage": "$default",
            "time": _iso(now),
            "timeEpoch": int(now * 1000),
        },
        "body": body,
        "isBase64Encoded": False,
    }


def scheduled_event(now: float) -> dict[str, Any]:
    """What the scheduled rule sends the timer function (an EventBridge "Scheduled Event")."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "000000000000",
        "time": _iso(now),
        "region": REGION,
        "resources": [f"arn:aws:events:{REGION}:000000000000:rule/menteur-local-sweep"],
        "detail": {},
    }


# --- the serverless part, on this machine ----------------------------------------------------


class LocalBot:
    """dynalite, the games table and one `Runtime`: what a Lambda container has, in one process.

    `update(...)` is Telegram POSTing to the webhook function, `tick()` the scheduled rule
    invoking the timer function. Use it as a context manager: leaving stops what it started.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        data_dir: Path | None = DATA_DIR,
        clock: Callable[[], float] = time.time,
        seed: int | None = None,
    ) -> None:
        """`seed`: the shuffles and the game ids drawn from it (None: as in Lambda)."""
        # No SQS locally: the sweep every second stands in for the delayed messages.
        self.settings = replace(settings, timer_queue_url=None)
        self.data_dir = data_dir
        self.clock = clock
        self.seed = seed
        self.dynalite = Dynalite(path=data_dir)
        self._runtime: Runtime | None = None

    @property
    def rt(self) -> Runtime:
        if self._runtime is None:
            raise RuntimeError("LocalBot is not started")
        return self._runtime

    def start(self) -> Self:
        try:
            self.dynalite.start()
            # Few, quick retries: a local server that does not answer will not answer later.
            client = self.dynalite.client(
                retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=2, read_timeout=10
            )
            try:
                create_table(client, self.settings.table_name)
            except (BotoCoreError, ClientError) as error:  # its first request: one line, no trace
                raise DynaliteError(f"dynalite did not answer: {error}") from error
            store = DynamoStore(client, self.settings.table_name)
            seeded = self.seed is not None
            self._runtime = Runtime(
                self.settings,
                store=store,
                clock=self.clock,
                rng=random.Random(self.seed) if seeded else None,
                game_ids=random.Random(self.seed) if seeded else None,
            )
        except BaseException:
            self.close()
            raise
        return self

    def update(self, update: Mapping[str, Any]) -> bool:
        """Hand one update to the webhook function; perform its webhook reply. Returns whether
        Telegram would count it delivered (a 2xx), else it is to be sent again."""
        event = webhook_event(update, self.settings.webhook_secret, self.clock())
        response = webhook.handle(event, self.rt)
        status = response["statusCode"]
        if status == 401:  # the secret is this process's own: a bug, not a forged update
            raise RuntimeError("the webhook handler refused the runner's own secret")
        if status // 100 != 2:
            return False
        body = response.get("body")
        if body:
            self.rt.run(telegram_io.perform_reply(self.rt.bot, json.loads(body)))
        return True

    def resume(self, chat: int, topic: int | None = None) -> bool:
        """A game resumed after the runner was stopped: the time it was off is not time anyone
        had to play. The awaited person gets their whole clock afresh from now (R20), a final
        play its whole 45 seconds (R14), and the game counts as changed and acted on now (a
        computer player moves a few seconds later; an idle end counts from now). The reminder
        may come again. Nothing else of the game changes: the same moment, so its buttons still
        work. One read and one write conditional on the version read, as a move is. Returns
        whether a running game was found."""
        store = self.rt.store
        record = store.load(chat, topic)
        game = record.game
        if game is None or game.phase not in (Phase.PLAY, Phase.DECIDE):
            return False
        now = self.clock()
        deadline = game.deadline
        if deadline is not None:
            # With the clock off a turn still has R18's 90 s after which the vote to end no
            # longer waits for the awaited person: afresh too.
            turn = game.clock or UNTIMED_TURN
            deadline = now + (DECISION_SECONDS if game.phase is Phase.DECIDE else turn)
        record.game = replace(game, deadline=deadline, updated=now, acted=now)
        record.reminded = None
        record.next_look = timing.next_look(record, self.settings.idle_expiry_seconds)
        item.save(store, record)
        return True

    def tick(self) -> None:
        """The scheduled rule fires: the timer function sweeps the chats that are due."""
        try:
            timer.handle(scheduled_event(self.clock()), self.rt)
        except Exception:
            # A failed invocation, as Lambda would log it; the next one comes in a second.
            LOGGER.exception("the timer function failed")

    def close(self) -> None:
        """Stop everything started, in reverse order; safe to call twice."""
        runtime, self._runtime = self._runtime, None
        try:
            if runtime is not None:
                close_runtime(runtime)
        finally:
            self.dynalite.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def close_runtime(rt: Runtime) -> None:
    """Close the runtime's HTTP client and event loop, after cancelling whatever a second
    Ctrl-C may have cut short (a task left pending would be reported at exit)."""
    loop = rt.loop
    if loop.is_closed():
        return
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    rt.close()


class Poller:
    """Telegram's side of the webhook, done by the runner: `getUpdates`, then each update to the
    webhook function as Lambda would receive it. An update is confirmed (the next offset) only
    once the handler has answered 2xx, so one it asked to have again comes back, as Telegram
    re-sends a webhook update until it gets a 2xx."""

    def __init__(self, local: LocalBot, *, read_timeout: float = 10.0) -> None:
        self.local = local
        self.read_timeout = read_timeout
        self.offset: int | None = None
        self.stalled = False  # the last poll stopped at an update the handler could not take

    def webhook(self) -> str:
        """The URL of the bot's webhook, "" if none is set. While one is set, Telegram sends
        the updates there (a deployed stack) and refuses getUpdates."""
        return self.local.rt.run(self.local.rt.bot.get_webhook_info()).url or ""

    def start(self) -> None:
        """Remove the bot's webhook, without which getUpdates is refused. Pending updates are
        kept: they are played on."""
        self.local.rt.run(self.local.rt.bot.delete_webhook(drop_pending_updates=False))

    def poll_once(self, timeout: int = POLL_TIMEOUT) -> int:
        """One getUpdates (waiting up to `timeout` seconds for one); returns how many updates
        were handled. Stops at an update the handler could not take: it comes back next time."""
        updates = self._get_updates(timeout)
        handled = 0
        self.stalled = False
        for update in updates:
            update_id = update.get("update_id")
            if not isinstance(update_id, int):
                continue
            if not self.local.update(update):
                LOGGER.warning("update %s not handled: it will be tried again", update_id)
                self.stalled = True
                break
            self.offset = update_id + 1
            handled += 1
        return handled

    def _get_updates(self, timeout: int) -> list[dict[str, Any]]:
        # The update types the deployed webhook asks for: the same code sees the same updates.
        params: dict[str, Any] = {
            "timeout": timeout,
            "allowed_updates": list(registration.ALLOWED_UPDATES),
        }
        if self.offset is not None:
            params["offset"] = self.offset
        bot = self.local.rt.bot
        # The raw JSON, as Telegram would POST it: Bot.get_updates would parse it into objects.
        # do_api_request warns that a dedicated method exists; that is the point here.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PTBUserWarning)
            result = self.local.rt.run(
                bot.do_api_request(
                    "getUpdates", api_kwargs=params, read_timeout=self.read_timeout + timeout
                )
            )
        return [u for u in result if isinstance(u, dict)] if isinstance(result, list) else []


# --- Ctrl-C between steps -------------------------------------------------------------------


class Interrupts:
    """Ctrl-C (or SIGTERM) stops the runner between steps: an update or a tick under way runs
    to its end first, so no write to the store and no event-loop task is cut in half. A second
    Ctrl-C during a step stops at once."""

    def __init__(self) -> None:
        self.busy = False
        self.pending = False
        self.stopping = False  # once stopping, more Ctrl-C would only cut the cleanup short
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)

    def restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.stopping:
            return
        if self.busy and not self.pending:
            self.pending = True
            return
        self.stopping = True
        raise KeyboardInterrupt

    @property
    def stopping_or_pending(self) -> bool:
        return self.stopping or self.pending

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        self.busy = True
        try:
            yield
        except Exception:
            if not self.pending:
                raise
            # Ctrl-C in a terminal reaches dynalite too (the same process group) and it exits
            # at once: a step cut short by that is expected. What it did not commit is sent
            # again next time (the update was not confirmed to Telegram).
            LOGGER.debug("a step failed while stopping", exc_info=True)
        finally:
            self.busy = False
        if self.pending:
            self.stopping = True
            raise KeyboardInterrupt


# --- the real bot, by long polling -----------------------------------------------------------


def refusal(error: TelegramError, settings: Settings) -> str:
    """The one line for a Bot API request that failed: what was answered, and where.

    python-telegram-bot calls every 401 and 404 an invalid token, but a server that is no Bot
    API (a wrong TELEGRAM_API_BASE_URL) answers 404 too: the token is blamed only when the
    answer was a Bot API's (JSON that python-telegram-bot could read, so no `__cause__`)."""
    where = settings.api_base_url or TELEGRAM_API
    while isinstance(error.__cause__, InvalidToken):  # Bot.initialize's "token … rejected"
        error = error.__cause__
    # The answer may quote the request's path, which holds the token (as "Cannot GET /bot…").
    said = str(error.message).replace(settings.bot_token, "<TELEGRAM_BOT_TOKEN>")
    said = said if len(said) <= ANSWER_SHOWN else said[: ANSWER_SHOWN - 1] + "…"
    if isinstance(error, NetworkError):
        return (
            f"The Bot API at {where} could not be reached: {said.rstrip('.')}. Without it, unset "
            "TELEGRAM_BOT_TOKEN (or add --offline) to play the offline table in this terminal."
        )
    if error.__cause__ is not None:
        return (
            f"The server at {where} is not a Bot API: it answered {said}. "
            "Check TELEGRAM_API_BASE_URL (unset: Telegram's own)."
        )
    if isinstance(error, InvalidToken):
        if settings.api_base_url is None:
            return BAD_TOKEN
        return (
            f"The Bot API at {where} refused TELEGRAM_BOT_TOKEN ({said}): check the token "
            "with @BotFather, and TELEGRAM_API_BASE_URL."
        )
    return f"The Bot API at {where} answered: {said}"


def serve(
    settings: Settings, data_dir: Path, interrupts: Interrupts, *, take_webhook: bool = False
) -> None:
    """Run the bot on Telegram until Ctrl-C: poll, hand updates over, tick every second. A bot
    whose webhook is set belongs to a deployed stack: polling would take its updates away, so
    it is refused unless `take_webhook`."""
    with LocalBot(settings, data_dir=data_dir) as local:
        poller = Poller(local)
        with interrupts.step():
            try:
                name = local.rt.run(questions.username(local.rt.bot))
                hooked = poller.webhook()
                if hooked and not take_webhook:
                    sys.exit(
                        f"@{name} has a webhook ({hooked}): a deployed stack gets its updates. "
                        "Polling would remove the webhook and leave that stack without them; "
                        "add --take-webhook to poll all the same."
                    )
                poller.start()
            except TelegramError as error:
                sys.exit(refusal(error, settings))
        if hooked:
            print(
                f"Note: the bot's webhook ({hooked}) was removed so that it can be polled; "
                "`.venv/bin/python -m infra.telegram_setup register --stack NAME` hands it back "
                "to the deployed stack.",
                flush=True,
            )
        print(
            f"@{name} is running on this machine (games in {shown(data_dir)}).\n"
            f"Add it to a group, send /newgame there, and play. Ctrl-C stops it.",
            flush=True,
        )
        next_tick = time.monotonic()
        while True:
            with interrupts.step():
                try:
                    poller.poll_once(POLL_TIMEOUT)
                    if poller.stalled:  # the store failed: give it a moment
                        time.sleep(RETRY_PAUSE)
                except InvalidToken as error:
                    sys.exit(refusal(error, settings))
                except Conflict:
                    sys.exit(
                        "Telegram says another process is getting this bot's updates (another "
                        "runner, or a webhook set again): stop it and start again."
                    )
                except NetworkError as error:  # timeouts included; Telegram is away for now
                    LOGGER.warning("getUpdates failed: %s; trying again", error)
                    time.sleep(RETRY_PAUSE)
                except TelegramError as error:
                    LOGGER.warning("getUpdates refused: %s; trying again", error)
                    time.sleep(RETRY_PAUSE)
                if time.monotonic() >= next_tick:
                    local.tick()
                    next_tick = time.monotonic() + TICK_SECONDS


def shown(path: Path) -> str:
    """A path as the person typed it, relative to where they are when it can be."""
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(Path.cwd()))
    return str(path)
