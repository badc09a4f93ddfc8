"""Load: many tables of eight people playing to the end, over real HTTP, at the same time.

    .venv/bin/python benchmarks/load.py [--tables 50] [--containers 4] [--seed 1]
    .venv/bin/python benchmarks/load.py --limits [--duration 180] [--tables 200]

Every player is a person pressing buttons (the computer player's policy decides what, from that
player's own view), so every move is a Telegram update POSTed, with the secret header, to a
local webhook endpoint. Behind it, `--containers` processes play Lambda containers: each builds
its Runtime once and handles one request at a time; a request goes to a free container (or
waits for one, as Lambda would throttle at its concurrency limit). They share one dynalite (a
DynamoDB-compatible server: conditional writes race as on DynamoDB) and one fake Bot API.

Shouts race the next play for real: whoever wants to shout presses Liar! while the next player
presses Play, and the bot must let exactly one through. Each table's driver keeps the game it
believes committed (the dealt game, then every move it saw applied) and compares it with the
stored game at the end: a lost or doubled move shows there.

Prints updates per second, the handler's p50/p99 latency, DynamoDB and Telegram requests per
move, conflicts retried, the CPU each part used, and what AWS and Telegram allow, on paper.

`--limits`: the fake Bot API holds the bot to Telegram's limits (429 with `retry_after` past 30
requests a second for the whole bot, and past 20 messages a minute into one group), and a timer
process runs the sweep every second (the local runner's stand-in for the minute rule; there is no
SQS here), during the load and after it, so that screens owed a redraw get it. People act on what
their screens show: they wait for a screen that does not show what they need yet (`--patience`).
`--duration` stops the pressing after that many seconds of play (the games stay where they are).
Then, from the end of the load, the run measures how long until every table and every hand reads
exactly as drawn from the stored game (the final play's message without its buttons once settled),
and checks that no move was lost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing
import os
import random
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

# Run as a script, this folder comes first on sys.path: put the project's root there instead.
ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)

import httpx  # noqa: E402

from engine import (  # noqa: E402
    Game,
    LetItStand,
    Move,
    Phase,
    Play,
    Shout,
    apply,
    cards_in,
    settle,
    strategy,
    view,
)
from handlers import callbacks, render  # noqa: E402
from handlers.callbacks import Kind  # noqa: E402
from handlers.dynamo import DynamoStore  # noqa: E402
from handlers.store import Record  # noqa: E402
from handlers.webhook import SECRET_HEADER  # noqa: E402
from infra.dynalite import Dynalite  # noqa: E402
from infra.fake_telegram import FakeTelegram, StoredMessage  # noqa: E402
from infra.harness import SECRET, TOKEN, Person, people  # noqa: E402
from infra.harness.driver import sweep  # noqa: E402
from infra.harness.screens import button, buttons, card_buttons, selected, shown_cards  # noqa: E402
from infra.harness.stack import TABLE  # noqa: E402
from infra.harness.updates import Updates  # noqa: E402
from infra.table import create_table  # noqa: E402

T = TypeVar("T")
PLAYERS = 8
FIRST_CHAT = -1002000000000
BUSY_RETRIES = 20
BOT_RATE = 30  # Telegram: about 30 requests a second per bot, all chats together
GROUP_RATE = 20  # and about 20 messages a minute into one group
LOOK_EVERY = 0.2  # seconds between two looks at a screen that does not show what one needs
CONVERGED_WITHIN = 600.0  # seconds after the load that screens may take before the run fails
# Everything but `updated` and `deadline`: the drivers' clock is not the containers'.
COMPARED = (
    *("ids", "hands", "bullets", "out", "pile", "aside", "rank", "turn", "plays"),
    *("last", "shouted", "phase", "winner"),
)

# --- a container: one process, one Runtime, one request at a time --------------------------------


def container(port: int, env: dict[str, str], api_base_url: str, ready: Any) -> None:
    """A Lambda container on `port`: its Runtime is built once, requests are handled in turn."""
    os.environ.update(env)
    from handlers import webhook  # noqa: PLC0415 - imported in the container process
    from handlers.config import Settings  # noqa: PLC0415
    from handlers.runtime import Runtime  # noqa: PLC0415

    settings = Settings(
        table_name=TABLE, bot_token=TOKEN, webhook_secret=SECRET, api_base_url=api_base_url
    )
    rt = Runtime(settings)
    lock = threading.Lock()  # one invocation at a time, like Lambda
    stats: dict[str, Any] = {
        "latency_ms": [],
        "outcomes": Counter(),
        "conflicts": 0,
        "given_up": 0,
    }

    class Outcomes(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            line = json.loads(record.getMessage())
            if "kind" in line:
                stats["outcomes"][f"{line['action'] or line['kind']}:{line['outcome']}"] += 1
                stats["conflicts"] += line["conflicts"]

    class GivenUp(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            stats["given_up"] += 1

    log = logging.getLogger("menteur.webhook")
    log.addHandler(Outcomes())
    log.propagate = False
    sending = logging.getLogger("handlers.telegram_io")
    sending.addHandler(GivenUp(logging.WARNING))
    sending.propagate = False

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            event = {"headers": dict(self.headers), "body": body.decode(), "isBase64Encoded": False}
            with lock:
                started = time.perf_counter()
                response = webhook.handle(event, rt)
                stats["latency_ms"].append((time.perf_counter() - started) * 1000)
            self._reply(response["statusCode"], str(response.get("body") or "").encode())

        def do_GET(self) -> None:
            with lock:
                counts = rt.store.counts
                out = {**stats, "reads": counts.reads, "writes": counts.writes}
                self._reply(200, json.dumps(out).encode())

        def _reply(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    ready.put(port)
    server.serve_forever()


def sweeper(env: dict[str, str], api_base_url: str, ready: Any, stop: Any, done: Any) -> None:
    """The timer function: the scheduled sweep, every second, until `stop` is set; then its
    outcomes go to `done`."""
    os.environ.update(env)
    from handlers.config import Settings  # noqa: PLC0415
    from handlers.runtime import Runtime  # noqa: PLC0415

    settings = Settings(
        table_name=TABLE, bot_token=TOKEN, webhook_secret=SECRET, api_base_url=api_base_url
    )
    rt = Runtime(settings)
    outcomes: Counter[str] = Counter()

    class Outcomes(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            line = json.loads(record.getMessage())
            outcomes[f"{line['action']}:{line['outcome']}"] += 1

    log = logging.getLogger("menteur.timer")
    log.addHandler(Outcomes())
    log.propagate = False
    sending = logging.getLogger("handlers.telegram_io")  # what it gave up: the sweep's business
    sending.addHandler(logging.NullHandler())
    sending.propagate = False
    ready.put(0)
    while not stop.is_set():
        started = time.monotonic()
        sweep(rt, time.time())
        stop.wait(max(0.0, 1.0 - (time.monotonic() - started)))
    done.put(dict(outcomes))


class Router:
    """Lambda's front door: each request to a free container, or wait until one is free."""

    def __init__(self, ports: list[int]) -> None:
        self.free: asyncio.Queue[int] = asyncio.Queue()
        for port in ports:
            self.free.put_nowait(port)
        self.ports = ports
        limits = httpx.Limits(max_connections=len(ports) * 2)
        self.http = httpx.AsyncClient(timeout=120.0, limits=limits)
        self.round_trip_ms: list[float] = []
        self.waited_ms: list[float] = []
        self.requests = 0

    async def post(self, update: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        asked = time.perf_counter()
        port = await self.free.get()
        sent = time.perf_counter()
        try:
            response = await self.http.post(
                f"http://127.0.0.1:{port}/",
                content=json.dumps(update),
                headers={
                    SECRET_HEADER: SECRET,
                    "Content-Type": "application/json",
                },
            )
        finally:
            self.free.put_nowait(port)
        done = time.perf_counter()
        self.requests += 1
        self.waited_ms.append((sent - asked) * 1000)
        self.round_trip_ms.append((done - sent) * 1000)
        return response.status_code, response.json() if response.content else None

    async def stats(self) -> list[dict[str, Any]]:
        found = []
        for port in self.ports:
            response = await self.http.get(f"http://127.0.0.1:{port}/stats")
            found.append(response.json())
        return found


# --- one table's eight people --------------------------------------------------------------------


@dataclass
class Tally:
    updates: int = 0
    toggles: int = 0
    busy_retries: int = 0
    committed: Counter[str] = field(default_factory=Counter)
    refused: int = 0
    bad_batches: int = 0  # races in which not exactly one press was applied
    bad: list[str] = field(default_factory=list)
    stale_screens: int = 0  # a table button drawn for another play than the driver's
    screen_changed: int = 0  # a hand redrawn mid-selection: the race was lost already
    late_decisions: int = 0  # a decision pressed after the 45 seconds, queued too long
    hands_asked: int = 0  # /hand sent because a hand's drawing was lost
    waits: int = 0  # rounds in which nobody could press: the screens did not show it yet
    waited_s: float = 0.0  # time people spent waiting for a screen to show what they need


class Driver:
    """The people at one table: they see their screens, decide, and press, concurrently."""

    def __init__(  # noqa: PLR0917 - one table's whole setting
        self,
        index: int,
        router: Router,
        tg: FakeTelegram,
        store: DynamoStore,
        seed: int,
        patience: float | None = None,
    ) -> None:
        self.chat = FIRST_CHAT - index
        # Under Telegram's limits a screen may show what one needs only later: wait for it this
        # long (None: no limits, every screen is there at once).
        self.patience = patience
        self.until = float("inf")  # no new round after this (time.monotonic())
        self.store = store  # the driver's own reads: what was dealt, and after a lost race
        self.router = router
        self.tg = tg
        self.updates = Updates(first=1_000_000 * (index + 1))
        self.rng = random.Random(seed * 1_000_003 + index)
        self.people = people(PLAYERS, first_id=10_000_000 + 10 * index)
        self.by_id = {p.id: p for p in self.people}
        self.tally = Tally()
        self.game: Game | None = None  # what this driver believes committed
        self.moves: list[Move] = []
        self.hand_ids: dict[int, int] = {}

    async def post(self, update: dict[str, Any]) -> dict[str, Any] | None:
        """Deliver as Telegram does: again after a 5xx, until a 200."""
        for _ in range(BUSY_RETRIES):
            status, body = await self.router.post(update)
            self.tally.updates += 1
            if status == 200:
                return body
            self.tally.busy_retries += 1
            await asyncio.sleep(0.05)
        raise RuntimeError(f"update {update['update_id']} never got a 200")

    async def press(self, person: Person, message: StoredMessage, data: str) -> bool:
        """Press a button; True when the bot applied it (its answer gives no reason)."""
        update = self.updates.press(person, message.chat_id, message.message_id, data)
        answer = await self.post(update)
        return answer is None or "text" not in answer

    def message(self, chat: int, message_id: int) -> StoredMessage:
        message = self.tg.message(chat, message_id)
        assert message is not None
        return message

    # --- opening the table -----------------------------------------------------------------------

    async def open(self) -> None:
        """/newgame off, everyone's Join and private /start, Start; then what was dealt. No turn
        clock (R20): once the pressing stops (--duration), a game must stay as the drivers left
        it for the check that no move was lost, and a table queued behind others must not be
        played for."""
        await self.post(self.updates.message(self.people[0], "/newgame off", self.chat))
        for person in self.people:
            table = await self._group_message(Kind.JOIN)
            join = button(table, Kind.JOIN)
            assert join is not None
            answer = await self.post(self.updates.press(person, self.chat, table.message_id, join))
            assert answer is not None
            if "url" not in answer:  # seated at once: the bot could write to them already
                continue
            payload = str(answer["url"]).split("?start=")[1]
            for _ in range(BUSY_RETRIES):
                await self.post(self.updates.message(person, f"/start {payload}", person.id))
                if await self._seated(person):
                    break
                # Telegram did not answer the membership check (a flood limit): "try again
                # in a moment", the bot says, and a person would.
                await asyncio.sleep(LOOK_EVERY)
        for _ in range(BUSY_RETRIES):
            table = await self._group_message(Kind.START, seated=PLAYERS)
            start = button(table, Kind.START)
            assert start is not None
            if await self.press(self.people[0], table, start):
                break
        self.game = (await asyncio.to_thread(self.store.load, self.chat)).game
        assert self.game is not None and self.game.phase is Phase.PLAY
        for person in self.people:
            await self._see_hand(person)

    async def _seated(self, person: Person) -> bool:
        record = await asyncio.to_thread(self.store.load, self.chat)
        return record.game is not None and person.id in record.game.ids

    async def _group_message(
        self,
        kind: Kind,
        number: int | None = None,
        *,
        seated: int = 0,
        patience: float | None = None,
    ) -> StoredMessage:
        """The latest group message showing a button of `kind` (drawn for play `number`, and
        on a table with `seated` players, when given): waited for under Telegram's limits."""

        def look() -> StoredMessage | None:
            for message in reversed(self.tg.chat_messages(self.chat)):
                data = button(message, kind)
                if data is None or (number is not None and callbacks.decode(data).number != number):
                    continue
                if seated and (message.text or "").count("\n") < seated:
                    return None  # the table before the last join
                return message
            return None

        return await self._until(look, f"a {kind.name} button", patience)

    async def _until(
        self, look: Callable[[], T | None], what: str, patience: float | None = None
    ) -> T:
        """What `look()` finds, looking again every LOOK_EVERY seconds while it finds nothing,
        for up to `patience` seconds (the driver's own by default)."""
        found = look()
        if found is not None:
            return found
        patience = self.patience if patience is None else patience
        if patience is None:
            raise AssertionError(f"table {self.chat}: no {what}")
        started = time.monotonic()
        while found is None and time.monotonic() - started < patience:
            await asyncio.sleep(LOOK_EVERY)
            found = look()
        self.tally.waited_s += time.monotonic() - started
        if found is None:
            raise AssertionError(f"table {self.chat}: no {what} after {patience:.0f} s")
        return found

    def _shows_hand(self, person: Person, message: StoredMessage | None) -> bool:
        """Whether `message` is the person's hand as it stands (with Play when it is their
        turn to play)."""
        assert self.game is not None
        if message is None or shown_cards(message) != set(cards_in(self._hand(person.id))):
            return False
        if self.game.phase is not Phase.PLAY or self.game.awaited != person.id:
            return True
        toggles = list(card_buttons(message).values())
        return bool(toggles) and callbacks.decode(toggles[0]).rank == self.game.rank

    async def _see_hand(self, person: Person) -> None:
        """Find the person's hand message; if the bot's last drawing of it was lost (a send
        given up), ask for it again with /hand, as a person would. Under Telegram's limits the
        bot draws it again by itself: wait for it."""
        if self._shows_hand(person, self.tg.message(person.id, self.hand_ids.get(person.id, 0))):
            return

        def look() -> StoredMessage | None:
            for message in reversed(self.tg.chat_messages(person.id)[-3:]):
                if self._shows_hand(person, message):
                    return message
            return None

        if self.patience is not None:
            self.hand_ids[person.id] = (await self._until(look, f"hand of {person}")).message_id
            return
        for attempt in range(3):
            latest = look()
            if latest is not None:
                self.hand_ids[person.id] = latest.message_id
                return
            if attempt < 2:
                self.tally.hands_asked += 1
                await self.post(self.updates.message(person, "/hand", self.chat))
        raise AssertionError(f"{person} cannot see their hand")

    def _hand(self, player: int) -> int:
        assert self.game is not None
        return self.game.hands[self.game.ids.index(player)]

    # --- playing ---------------------------------------------------------------------------------

    async def play(self) -> None:
        while self.game is not None and self.game.phase is not Phase.OVER:
            if time.monotonic() > self.until:
                return  # the load is over: the game stays where it is
            game, now = self.game, time.time()
            wanted = [
                move
                for player in game.ids
                if (move := strategy.choose(view(game, player, now), self.rng)) is not None
            ]
            if not wanted:
                # The 45 seconds are over (this table waited behind the others): the decider
                # presses Let it stand late, as a person would; the bot lets the play stand.
                assert game.phase is Phase.DECIDE and game.awaited is not None, game
                wanted = [LetItStand(game.awaited, game.plays)]
            if game.phase is Phase.PLAY:
                await self._see_hand(self.by_id[game.awaited])  # type: ignore[index]
            # Everyone decides from the same screens, then presses: a Liar! drawn for this play
            # and the next player's Play race for real.
            table = self._table()
            presses = [self._act(move, table) for move in wanted]
            applied = [
                m for m, ok in zip(wanted, await asyncio.gather(*presses), strict=True) if ok
            ]
            self.tally.refused += len(wanted) - len(applied)
            if len(applied) != 1:
                await self._resync(game, wanted, applied)
                continue
            self.game, _ = apply(game, applied[0], now)
            self.moves.append(applied[0])
            self.tally.committed[type(applied[0]).__name__] += 1
            if self.game.phase is Phase.DECIDE:
                # A final play: its 45 seconds run from when the bot handled it, not from when
                # the driver pressed (a request may queue for seconds). Take the bot's deadline.
                stored = (await asyncio.to_thread(self.store.load, self.chat)).game
                assert stored is not None and _same(stored, self.game)
                self.game.deadline = stored.deadline

    async def _resync(self, game: Game, wanted: list[Move], applied: list[Move]) -> None:
        """Not exactly one press went through: read the stored game to go on from there.

        Legitimate only when a decision came after the 45 seconds (queued behind other
        tables): the late press itself let the final play stand, and every press was refused.
        """
        stored = (await asyncio.to_thread(self.store.load, self.chat)).game
        assert stored is not None
        timed_out, _ = settle(game, float("inf"))
        if not applied and game.phase is Phase.DECIDE and _same(stored, timed_out):
            self.tally.late_decisions += 1
        elif not applied and self.patience is not None and _same(stored, game):
            # Nobody's screen showed their button yet (a redraw owed after a flood limit).
            self.tally.waits += 1
            await asyncio.sleep(LOOK_EVERY)
        else:
            self.tally.bad_batches += 1
            self.tally.bad.append(f"table {self.chat}: {applied} of {wanted} applied")
        self.game = stored

    async def _act(self, move: Move, table: StoredMessage | None) -> bool:
        """Make `move` by pressing buttons; False when refused, or when the person's screen
        changed under them (another press won the race) so that they do not press at all."""
        person = self.by_id[move.player]  # type: ignore[union-attr]
        match move:
            case Play(_, cards, turns):
                message = self.message(person.id, self.hand_ids[person.id])
                for card in sorted(selected(message) ^ set(cards_in(cards))):
                    toggle = card_buttons(message).get(card)
                    if toggle is None:
                        return self._changed()
                    await self.press(person, message, toggle)
                    self.tally.toggles += 1
                    message = self.message(person.id, self.hand_ids[person.id])
                data = button(message, Kind.PLAY)
                if data is None or callbacks.decode(data).number != turns:
                    return self._changed()
                return await self.press(person, message, data)
            case Shout(_, play) | LetItStand(_, play):
                kind = Kind.SHOUT if isinstance(move, Shout) else Kind.STAND
                data = button(table, kind)
                if (data is None or callbacks.decode(data).number != play) and self.patience:
                    # The table is behind (a flood limit): the final play's message, or the
                    # table once redrawn, will show the button for this play.
                    try:
                        table = await self._group_message(kind, play, patience=LOOK_EVERY * 10)
                    except AssertionError:
                        return False
                    data = button(table, kind)
                if table is None or data is None or callbacks.decode(data).number != play:
                    self.tally.stale_screens += 1  # drawn before the race began: never stale
                    return False
                return await self.press(person, table, data)
        raise AssertionError(f"the computer player does not {move}")

    def _table(self) -> StoredMessage | None:
        """The group's latest message with buttons of the running game (the table, or a final
        play's message): what people look at to shout."""
        for message in reversed(self.tg.chat_messages(self.chat)):
            if message.reply_markup:
                return message
        return None

    def _changed(self) -> bool:
        self.tally.screen_changed += 1
        return False


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [int(s.getsockname()[1]) for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _same(a: Game, b: Game) -> bool:
    return all(getattr(a, f) == getattr(b, f) for f in COMPARED)


# --- the run -------------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else float("nan")


def cpu_of(pid: int) -> float:
    """CPU seconds a process has used (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run(args: argparse.Namespace, dynalite: Dynalite, tg: FakeTelegram) -> None:
    spawn = multiprocessing.get_context("spawn")
    ready = spawn.Queue()
    ports = free_ports(args.containers)
    processes = [
        spawn.Process(
            target=container, args=(port, dynalite.env(), tg.base_url, ready), daemon=True
        )
        for port in ports
    ]
    for process in processes:
        process.start()
    for _ in processes:
        await asyncio.to_thread(ready.get, True, 60)
    stop, done = spawn.Event(), spawn.Queue()
    timer = spawn.Process(
        target=sweeper, args=(dynalite.env(), tg.base_url, ready, stop, done), daemon=True
    )
    if args.limits:
        timer.start()
        await asyncio.to_thread(ready.get, True, 60)
    router = Router(ports)
    store = DynamoStore(dynalite.client(), TABLE)  # the drivers' own, for what was dealt and kept
    patience = args.patience if args.limits else None
    drivers = [Driver(i, router, tg, store, args.seed, patience) for i in range(args.tables)]
    load_before = os.getloadavg()[0]

    started = time.perf_counter()
    await asyncio.gather(*(d.open() for d in drivers))
    opened = time.perf_counter()
    before = await router.stats()
    calls_before = len(tg.calls())
    limited_before = tg.limited
    updates_before = router.requests
    cpu_before = _cpus(processes, dynalite)
    router.round_trip_ms.clear()
    router.waited_ms.clear()
    if args.duration is not None:
        for d in drivers:
            d.until = time.monotonic() + args.duration

    await asyncio.gather(*(d.play() for d in drivers))

    ended = time.perf_counter()
    load_over = time.monotonic()
    after = await router.stats()
    cpu_after = _cpus(processes, dynalite)
    calls = tg.calls()[calls_before:]
    limited = tg.limited - limited_before
    updates = router.requests - updates_before

    lost = 0
    for d in drivers:
        stored = (await asyncio.to_thread(store.load, d.chat)).game
        assert stored is not None and d.game is not None
        # Once the pressing stopped, the timer may still let a final play stand at 45 s.
        if not (_same(stored, d.game) or _same(stored, settle(d.game, float("inf"))[0])):
            lost += 1
    converged_s, stale, swept = 0.0, list[str](), dict[str, int]()
    if args.limits:
        converged_s, stale = await converge(store, tg, drivers, load_over)
        stop.set()
        swept = await asyncio.to_thread(done.get, True, 60)
        timer.join(10)
    for process in processes:
        process.terminate()
    await router.http.aclose()

    tally = Tally()
    for d in drivers:
        tally.toggles += d.tally.toggles
        tally.busy_retries += d.tally.busy_retries
        tally.committed += d.tally.committed
        tally.refused += d.tally.refused
        tally.bad_batches += d.tally.bad_batches
        tally.bad += d.tally.bad
        tally.stale_screens += d.tally.stale_screens
        tally.screen_changed += d.tally.screen_changed
        tally.late_decisions += d.tally.late_decisions
        tally.hands_asked += d.tally.hands_asked
        tally.waits += d.tally.waits
        tally.waited_s += d.tally.waited_s
    moves = sum(tally.committed.values())
    play_s = ended - opened
    reads = sum(a["reads"] - b["reads"] for a, b in zip(after, before, strict=True))
    writes = sum(a["writes"] - b["writes"] for a, b in zip(after, before, strict=True))
    latency = [
        ms
        for a, b in zip(after, before, strict=True)
        for ms in a["latency_ms"][len(b["latency_ms"]) :]
    ]
    conflicts = sum(a["conflicts"] - b["conflicts"] for a, b in zip(after, before, strict=True))
    given_up = sum(a["given_up"] for a in after)
    outcomes: Counter[str] = Counter()
    for a, b in zip(after, before, strict=True):
        outcomes += Counter(a["outcomes"]) - Counter(b["outcomes"])
    store_updates = updates - tally.toggles
    telegram = len(calls)
    telegram_game = len([c for c in calls if c.method.lower() != "editmessagereplymarkup"])
    telegram_toggles = telegram - telegram_game
    games_won = sum(
        1 for d in drivers if d.game and d.game.phase is Phase.OVER and d.game.winner is not None
    )

    print(
        f"tables: {args.tables} × {PLAYERS} people; containers: {args.containers} processes, "
        f"one request at a time each; cores: {os.cpu_count()}; "
        f"load average before: {load_before:.2f}"
    )
    print(f"opening the tables: {opened - started:.1f} s ({updates_before} updates)")
    playing = "playing to the end" if args.duration is None else "playing"
    print(
        f"{playing}: {play_s:.1f} s; games won: {games_won}/{args.tables}; "
        f"moves committed: {moves} ({dict(tally.committed)}); presses refused: {tally.refused}"
    )
    print(f"updates: {updates} ({tally.toggles} card toggles, {store_updates} that read and write)")
    print(f"updates per second: {updates / play_s:.1f}; moves per second: {moves / play_s:.1f}")
    print(
        f"handler latency (inside the container): p50 {percentile(latency, 0.5):.1f} ms, "
        f"p99 {percentile(latency, 0.99):.1f} ms"
    )
    print(
        f"round trip at the driver: p50 {percentile(router.round_trip_ms, 0.5):.1f} ms, "
        f"p99 {percentile(router.round_trip_ms, 0.99):.1f} ms; waiting for a free container: "
        f"p50 {percentile(router.waited_ms, 0.5):.1f} ms, "
        f"p99 {percentile(router.waited_ms, 0.99):.1f} ms"
    )
    print(
        f"DynamoDB requests per move: ({reads} reads + {writes} writes) / {moves} = "
        f"{(reads + writes) / moves:.2f} (per update that reads and writes: "
        f"{(reads + writes) / store_updates:.2f})"
    )
    print(
        f"Telegram requests per move: {telegram_game} / {moves} = {telegram_game / moves:.2f} "
        f"(+ {telegram_toggles / moves:.2f} toggle redraws; button answers ride on the webhook "
        f"response: 0)"
    )
    print(
        f"conflicts retried: {conflicts} (in {store_updates} updates); 5xx answered and "
        f"re-sent: {tally.busy_retries}"
    )
    print(
        f"lost or doubled moves: {lost} tables whose stored game differs from the moves their "
        f"driver saw committed; races without exactly one winner: {tally.bad_batches}; "
        f"stale table buttons: {tally.stale_screens}; hands redrawn mid-selection by a "
        f"winning shout: {tally.screen_changed}; decisions pressed after the 45 s (queued): "
        f"{tally.late_decisions}"
    )
    for line in tally.bad[:5]:
        print(f"  {line}")
    print(
        f"Telegram requests given up by the bot (whole run): {given_up}; hands asked for again "
        f"with /hand after a lost drawing: {tally.hands_asked}"
    )
    cpu = {k: cpu_after[k] - cpu_before[k] for k in cpu_after}
    print(
        f"CPU seconds while playing: containers {cpu['containers']:.1f}, dynalite "
        f"{cpu['dynalite']:.1f}, drivers + fake Telegram {cpu['main']:.1f} "
        f"(of {play_s * (os.cpu_count() or 1):.1f} available)"
    )
    used = sum(cpu.values())
    cores = os.cpu_count() or 1
    print(
        f"CPU per update: {used / updates * 1000:.1f} ms in all, "
        f"{cpu['containers'] / updates * 1000:.1f} ms of it in the containers: with this "
        f"machine to itself, about {cores * updates / used:.0f} updates/s"
    )
    print(f"outcomes: {dict(sorted(outcomes.items()))}")
    if args.limits:
        total = len(calls)
        after_load = tg.limited - limited_before - limited
        print(
            f"under Telegram's limits ({BOT_RATE} requests/s for the bot, {GROUP_RATE} "
            f"messages/min per group): Telegram requests per move {total / moves:.2f} (toggle "
            f"redraws and 429s included); 429s answered while playing: {limited} "
            f"({limited / total:.1%} of the requests), after: {after_load}"
        )
        print(
            f"  the timer's sweep: {dict(sorted(swept.items()))}; people waiting for a screen "
            f"to show their button: {tally.waits} rounds, {tally.waited_s:.0f} s in all"
        )
        print(
            f"  from the end of the load to every screen (tables and hands) equal to the stored "
            f"game: {converged_s:.1f} s; stale screens left: {len(stale)}; lost moves: {lost}"
        )
        for line in stale[:5]:
            print(f"    {line}")
        return
    on_paper(telegram / moves, writes / moves, moves / play_s)


async def converge(
    store: DynamoStore, tg: FakeTelegram, drivers: list[Driver], since: float
) -> tuple[float, list[str]]:
    """Seconds from `since` until every table and hand reads as drawn from the stored game (the
    timer keeps sweeping meanwhile), and the screens still stale if that never happens."""
    while True:
        stale = []
        for d in drivers:
            record = await asyncio.to_thread(store.load, d.chat)
            stale += stale_screens(record, tg)
        waited = time.monotonic() - since
        if not stale or waited > CONVERGED_WITHIN:
            return waited, stale
        await asyncio.sleep(1.0)


def stale_screens(record: Record, tg: FakeTelegram) -> list[str]:
    """The screens of one table that do not read as drawn from its stored game: the table, each
    hand (with the selection its owner made), and a settled final play that kept its buttons."""
    game, chat = record.game, record.chat
    assert game is not None
    found = []

    def drawn(message: StoredMessage | None, draw: Callable[[float], Any]) -> bool:
        # A decision's countdown is drawn at some second of its 45: any of them is this game.
        now = time.time()
        moments = [now] if game.deadline is None else [game.deadline - s for s in range(46)]
        shown = (
            None
            if message is None
            else (message.text, [b.get("callback_data") for b in buttons(message)])
        )
        for at in moments:
            screen = draw(at)
            if shown == (screen.text, [b.data for row in screen.buttons for b in row]):
                return True
        return False

    table = tg.message(chat, record.table_msg or 0)
    lang, note, place = record.lang, record.note, record.place
    if not drawn(table, lambda at: render.table(game, place, lang, at, note)):
        found.append(f"table of {chat}: {table.text if table else None!r}")
    for player in game.ids:
        hand = tg.message(player, record.hand_msgs.get(player, 0))
        mine = sum(1 << c for c in selected(hand))

        def draw(at: float, player: int = player, mine: int = mine) -> Any:
            lang = record.lang_of(player)
            return render.hand(
                game, player, place, lang, at, selection=mine, table_lang=record.lang
            )

        if not drawn(hand, draw):
            found.append(f"hand of {player} at {chat}")
    final = tg.message(chat, record.final_msg or 0)
    if game.phase is not Phase.DECIDE and final is not None and final.reply_markup:
        found.append(f"final play's buttons at {chat}")
    return found


def _cpus(processes: list[Any], dynalite: Dynalite) -> dict[str, float]:
    process = dynalite._process  # the benchmark's own server, to meter it
    return {
        "containers": sum(cpu_of(p.pid) for p in processes),
        "dynalite": cpu_of(process.pid) if process is not None else 0.0,
        "main": sum(os.times()[:2]),
    }


def on_paper(telegram_per_move: float, writes_per_move: float, measured_moves_per_s: float) -> None:
    """What Telegram and AWS allow one bot, with this run's costs per move."""
    telegram_rate = 30.0  # about 30 requests a second per bot, all chats together
    group_per_minute = 20  # and about 20 messages a minute into one group
    human_s = 5.0  # a lively table: a move every five seconds (people think, and shout)
    lambda_concurrency = (1000, 10)  # default regional quota; what a new account may start at
    invocation_s = 0.15  # a real invocation waits for Telegram (~50 ms a call, sent in parallel)
    new_table_wcu = 4000.0  # a new on-demand table takes up to 4,000 write units/s at once
    partition_wcu = 1000.0  # per partition: one game is one item, so one partition
    telegram_moves = telegram_rate / telegram_per_move
    lambda_rates = [c / invocation_s for c in lambda_concurrency]
    dynamo_moves = new_table_wcu / writes_per_move
    print("on paper, for one bot on AWS, with this run's costs per move:")
    print(
        f"  Telegram: {telegram_rate:.0f} requests/s ÷ {telegram_per_move:.2f} requests per move "
        f"(toggle redraws included) = {telegram_moves:.1f} moves/s for the whole bot  <- the limit"
    )
    print(
        f"    at a move every {human_s:.0f} s per table: about {telegram_moves * human_s:.0f} "
        "tables playing at once"
    )
    print(
        f"    one group: ~{group_per_minute} messages/min; the table is one message edited in "
        f"place and new messages are kept under 18/min, so a table's own pace "
        f"({60 / human_s:.0f} moves/min) is what bounds it"
    )
    print(
        f"  Lambda: {lambda_concurrency[0]} concurrent ÷ {invocation_s:.2f} s per invocation = "
        f"{lambda_rates[0]:.0f} updates/s ({lambda_concurrency[1]} concurrent on a new account: "
        f"{lambda_rates[1]:.0f}/s)"
    )
    print(
        f"  DynamoDB on demand: {new_table_wcu:.0f} write units/s ÷ {writes_per_move:.2f} writes "
        f"per move (items < 1 KB: one unit each) = {dynamo_moves:.0f} moves/s; one game is one "
        f"item in one partition ({partition_wcu:.0f} units/s) against a move every few seconds"
    )
    print(
        f"  so Telegram's {telegram_moves:.1f} moves/s binds first: below DynamoDB "
        f"({dynamo_moves:.0f}), Lambda ({lambda_rates[1]:.0f}-{lambda_rates[0]:.0f} updates/s) "
        f"and this 2-core machine ({measured_moves_per_s:.1f} moves/s measured here)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--containers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--limits",
        action="store_true",
        help="Telegram's limits in the fake Bot API, and the timer's sweep every second",
    )
    parser.add_argument("--duration", type=float, help="seconds of play, then stop pressing")
    parser.add_argument("--patience", type=float, default=300.0, help="waiting for a screen")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    limits = (GROUP_RATE, BOT_RATE) if args.limits else (None, None)
    with Dynalite() as dynalite, FakeTelegram(flood_limit=limits[0], bot_rate=limits[1]) as tg:
        create_table(dynalite.client(), TABLE)
        asyncio.run(run(args, dynalite, tg))


if __name__ == "__main__":
    main()
