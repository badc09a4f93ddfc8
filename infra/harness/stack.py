"""The whole bot on this machine, built one way for every test and benchmark: `Stack`.

One store (moto's DynamoDB, a real dynalite process, or the in-memory fake for sequential runs;
the table built from template.yaml, every client refusing what DynamoDB refuses), one fake
Telegram, and as many "containers" as a test wants: each a `Runtime` of its own (event loop,
bot, DynamoDB client), as separate Lambda containers have, built whole (its clock, random
generators, timers and sleep given). People press the buttons the bot drew, as Telegram
delivers them: a JSON update through `webhook.handle`, the secret header included, and the
webhook's reply performed through the bot, as the local runner does. `infra.harness.bot`'s
`Table` is one container of a stack, driven as one bot.

`HookedStore` wraps a container's store so a test can pause or kill it at an exact point
(after its read, before or after its write), and `Outcomes` collects the outcome each handler
logs, so a test can tell "applied" from "refused:already_challenged" without guessing.

Run as a module, it is a container that is killed right after its first successful write
(`python -m infra.harness.stack crash-after-write CONFIG_JSON UPDATE_JSON`): a Lambda
killed between the commit and the sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import random
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import urlsplit

import boto3
import telegram
from telegram.request import BaseRequest, RequestData

from engine import Game, cards_in
from handlers import telegram_io, webhook
from handlers.config import Settings
from handlers.dynamo import DynamoStore
from handlers.runtime import Runtime
from handlers.store import Change, Counts, Record, Store
from handlers.timing import Timers
from infra.dynalite import Dynalite
from infra.fake_telegram import FakeTelegram
from infra.harness import GROUP, SECRET, TOKEN, Clock, Person
from infra.harness.driver import Chats, Driver, fire, sweep
from infra.harness.limits import Limited
from infra.harness.memory import MemoryStore
from infra.harness.updates import Reply, Updates, event
from infra.table import create_table

TABLE = "menteur-test"


# --- a store that a test can stop at an exact point ----------------------------------------------

Hook = Callable[[Any], None]


class HookedStore:
    """A store that calls hooks around its reads and its commits; otherwise the store it wraps.

    `after_load` runs after each read (with the record), `before_save` before each conditional
    write of an action (with its change), `after_save` after each that succeeded (the commit).
    `commits` counts those.
    """

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.counts: Counts = inner.counts
        self.after_load: Hook | None = None
        self.before_save: Hook | None = None
        self.after_save: Hook | None = None
        self.loads = 0
        self.commits = 0

    def load(self, chat: int, topic: int | None = None) -> Record:
        record = self.inner.load(chat, topic)
        self.loads += 1
        if self.after_load is not None:
            self.after_load(record)
        return record

    def apply(self, change: Change) -> None:
        commit = "ver" in change.set  # an action's conditional write (`handlers.item.commit`)
        if commit and self.before_save is not None:
            self.before_save(change)
        self.inner.apply(change)
        if commit:
            self.commits += 1
            if self.after_save is not None:
                self.after_save(change)

    def overdue(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
        return self.inner.overdue(now, limit)

    def topics(self, chat: int) -> list[int]:
        return self.inner.topics(chat)

    def move(self, old_chat: int, new_chat: int) -> None:
        self.inner.move(old_chat, new_chat)


# --- what each handler did, from its log line ----------------------------------------------------


class Outcomes(logging.Handler):
    """The outcome lines the webhook and timer handlers log (one JSON object per update)."""

    LOGGERS = ("menteur.webhook", "menteur.timer")

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(ValueError, TypeError):
            line = json.loads(record.getMessage())
            if isinstance(line, dict) and "kind" in line:
                self.lines.append(line)  # list.append is atomic: handlers run in many threads

    def of(self, update_id: int) -> list[dict[str, Any]]:
        return [line for line in self.lines if line.get("update") == update_id]

    def results(self) -> list[str]:
        return [str(line["outcome"]) for line in self.lines]

    def clear(self) -> None:
        self.lines.clear()

    @contextlib.contextmanager
    def installed(self) -> Iterator[Self]:
        with listening(self, self.LOGGERS):
            yield self


@contextlib.contextmanager
def listening(handler: logging.Handler, names: Iterable[str]) -> Iterator[None]:
    """`handler` receives the INFO records of the loggers `names`, until the block ends."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)


# --- the game, white-box ------------------------------------------------------------------------


def held(game: Game, player: int) -> set[int]:
    return set(cards_in(game.hands[game.ids.index(player)]))


# --- Telegram in the same process ----------------------------------------------------------------


class InProcess(BaseRequest):
    """python-telegram-bot's HTTP client, replaced by a call to the fake Telegram's
    `serve_form` in this process: python-telegram-bot builds the same requests (the form
    fields it would post) and parses the same answers, the fake records and fails them the
    same way; only the socket, the HTTP client and the form's encoding are gone."""

    def __init__(self, tg: FakeTelegram) -> None:
        self.tg = tg

    @property
    def read_timeout(self) -> float | None:
        return None

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        *_timeouts: Any,  # nothing here waits on a network
        **_timeouts_by_name: Any,
    ) -> tuple[int, bytes]:
        if request_data is not None and request_data.contains_files:
            raise NotImplementedError("no upload in process: use Stack(sockets=True)")
        fields = request_data.json_parameters if request_data is not None else {}
        status, payload, _, wait = self.tg.serve_form(urlsplit(url).path, fields)
        if wait > 0:
            await asyncio.sleep(wait)  # a fault that answers late (Fault.after)
        return status, payload


# --- the stack -----------------------------------------------------------------------------------


@dataclass
class Container:
    """One Lambda container: its runtime, its (hooked) store, its clock and timers."""

    rt: Runtime
    store: HookedStore
    clock: Clock
    timers: Timers | None = None

    def deliver(self, ev: dict[str, Any]) -> dict[str, Any]:
        """The webhook handler on a Lambda event, its webhook reply performed as Telegram
        performs it (through the bot here, as the local runner does)."""
        response = webhook.handle(ev, self.rt)
        reply = Reply.of(response)
        if reply.status == 200 and reply.answer is not None:
            self.rt.run(telegram_io.perform_reply(self.rt.bot, reply.answer))
        return response

    def post(self, update: dict[str, Any], secret: str | None = SECRET) -> Reply:
        """Telegram's POST of `update` to this container's webhook handler."""
        return Reply.of(self.deliver(event(update, secret=secret, now=self.clock())))

    def sweep(self) -> None:
        """The scheduled sweep, as the timer Lambda runs it."""
        sweep(self.rt, self.clock())

    def fire(self, *messages: str | dict[str, Any]) -> dict[str, Any]:
        """The timer function on these SQS messages."""
        return fire(self.rt, *messages)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.rt.close()


Backend = Literal["moto", "dynalite", "memory"]


class Stack(Chats):
    """The bot's surroundings: one fake Telegram and one store, `store`: moto's DynamoDB, a
    dynalite process (or the DynamoDB-compatible server whose boto3 client is `dynamodb`), each
    client wrapped in `Limited`; or, for sequential runs, one in-memory store shared by every
    container. Containers are made on demand and closed on exit.

    With `sockets=False` the containers' bots reach the fake Telegram in this process
    (`InProcess`) rather than over loopback HTTP: for many games in a row, where the sockets
    and the server's threads would cost more than the bot itself. `clock` is the fake
    Telegram's (and the updates' dates), `flood_limit` its 429 beyond that many messages a
    minute into one chat; `log_level` the containers' logging.
    """

    def __init__(
        self,
        *,
        store: Backend = "dynalite",
        dynamodb: Any = None,
        sockets: bool = True,
        clock: Clock | None = None,
        flood_limit: int | None = None,
        log_level: str = "INFO",
    ) -> None:
        self.backend = store
        self.sockets = sockets
        self.clock = clock
        self.log_level = log_level
        self.dynalite = Dynalite()
        self.tg = FakeTelegram(clock=clock or time.monotonic, flood_limit=flood_limit)
        self.updates = Updates(clock=clock)
        self.client: Any = None if dynamodb is None else Limited(dynamodb)  # the test's own
        self.shared: MemoryStore | None = MemoryStore() if store == "memory" else None
        self._containers: list[Container] = []
        self._lock = threading.Lock()
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Self:
        try:
            if self.client is None and self.backend == "dynalite":
                self.dynalite.start()
                self.client = Limited(self.dynalite.client())
            elif self.client is None and self.backend == "moto":
                from moto import mock_aws  # noqa: PLC0415 - what runs on dynalite needs none

                self._stack.enter_context(mock_aws())
                self.client = Limited(_sessions().client("dynamodb", region_name="us-east-1"))
            if self.client is not None:
                create_table(self.client, TABLE)
            self.tg.start()
        except BaseException:
            self._stack.close()
            self.dynalite.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for container in self._containers:
            container.close()
        self.tg.stop()
        self._stack.close()
        self.dynalite.stop()

    def settings(self, **changed: Any) -> Settings:
        settings = Settings(
            table_name=TABLE,
            bot_token=TOKEN,
            webhook_secret=SECRET,
            api_base_url=self.tg.base_url,
            log_level=self.log_level,
        )
        return replace(settings, **changed)

    def container(
        self,
        clock: Clock | None = None,
        seed: int = 0,
        *,
        timers: Timers | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        webhook_replies: bool = True,
        read_timeout: float | None = None,
        **settings: Any,
    ) -> Container:
        """A new container: its own event loop, bot (HTTP client) and DynamoDB client (on moto,
        the stack's: moto is one process's), its random generators seeded with `seed`, its
        timers `timers` (with none, SQS's if `settings` name a queue), its `clock` (the
        stack's, or a new one), its `sleep`; `settings` changed from the stack's. Without
        `webhook_replies`, a button's answer is a request of the bot's own (as when long
        polling); `read_timeout`: how long its bot waits for Telegram's answers."""
        clock = clock or self.clock or Clock()
        inner: Store
        if self.shared is not None:
            inner = self.shared
        elif self.backend == "dynalite" and not self.dynalite.running:
            inner = DynamoStore(self.client, TABLE)  # a server the stack was given
        elif self.backend == "dynalite":
            inner = DynamoStore(Limited(self.dynalite.client()), TABLE)
        else:
            inner = DynamoStore(self.client, TABLE)
        store = HookedStore(inner)
        bot = None
        if not self.sockets:
            request = InProcess(self.tg)
            bot = telegram.Bot(
                TOKEN, base_url=self.tg.base_url, request=request, get_updates_request=request
            )
        elif read_timeout is not None:
            bot = telegram_io.make_bot(TOKEN, self.tg.base_url, read_timeout=read_timeout)
        rt = Runtime(
            self.settings(**settings),
            store=store,
            clock=clock,
            bot=bot,
            timers=timers,
            rng=random.Random(seed),
            game_ids=random.Random(seed),
            sleep=sleep,
            webhook_replies=webhook_replies,
        )
        container = Container(rt, store, clock, timers)
        with self._lock:
            self._containers.append(container)
        return container

    # --- the stored item, raw: to set a prepared game up again and again -------------------------

    def snapshot(self, chat: int = GROUP) -> dict[str, Any]:
        item: dict[str, Any] = self.client.get_item(
            TableName=TABLE, Key={"pk": {"S": f"chat#{chat}"}}, ConsistentRead=True
        )["Item"]
        return item

    def restore(self, item: dict[str, Any]) -> None:
        """The chat's item as it was, and its flood budget as new: a round replayed from a
        prepared game sends into a minute of its own."""
        fresh = {k: v for k, v in item.items() if k not in ("gs", "hd")}
        self.client.put_item(TableName=TABLE, Item=fresh)

    def version(self, chat: int = GROUP) -> int:
        return int(self.snapshot(chat)["ver"]["N"])

    def record(self, chat: int = GROUP) -> Record:
        if self.shared is not None:
            return self.shared.peek(chat)
        return DynamoStore(self.client, TABLE).load(chat)

    def people(self, c: Container) -> Driver:
        """People whose updates reach container `c`."""
        return Driver(self, c.post, self.updates, c.clock)


@functools.cache
def _sessions() -> boto3.Session:
    """One boto3 session for every moto client of the run. moto drops boto3's default session
    each time a mock starts, and a new session reads botocore's endpoint and service files
    again; moto's state is its own, so each test still gets an empty DynamoDB."""
    return boto3.Session()


# --- people at the table, pressing what they see -------------------------------------------------


def open_game(
    stack: Stack,
    c: Container,
    players: list[Person],
    chat: int = GROUP,
    *,
    command: str = "/newgame",
    robots: int = 0,
) -> Game:
    """`command` (/newgame), each player's Join button and private /start, `robots` times
    /addbot, then Start: all via the webhook of container `c`."""
    return stack.people(c).open(players, chat, command=command, robots=robots)


# --- a container killed between its write and its sends ------------------------------------------


def crash_after_write(config: dict[str, Any], update: dict[str, Any]) -> None:
    """Handle `update` in this process, and die (SIGKILL) right after the write commits."""
    os.environ.update(config["env"])
    clock = Clock(config["now"])
    settings = Settings(
        table_name=config["table"],
        bot_token=TOKEN,
        webhook_secret=SECRET,
        api_base_url=config["api_base_url"],
    )
    store = HookedStore(DynamoStore(Limited(boto3.client("dynamodb")), config["table"]))
    store.after_save = lambda record: os.kill(os.getpid(), signal.SIGKILL)
    rt = Runtime(settings, store=store, clock=clock)
    webhook.handle(event(update), rt)
    sys.exit(3)  # not reached: the write above kills the process


if __name__ == "__main__":
    if sys.argv[1:2] == ["crash-after-write"]:
        crash_after_write(json.loads(sys.argv[2]), json.loads(sys.argv[3]))
