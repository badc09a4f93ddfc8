"""Races and faults, against a real dynalite process (in-process moto is not atomic under threads).

Each racer is a container of its own (event loop, bot, DynamoDB client), like separate Lambda
containers, all pointed at one dynalite and one fake Telegram; updates go through the webhook
handler. A barrier releases the racers together. Whichever wins a free race is accepted, and the
result is checked against the engine applying the moves one after the other (winner first).
Races are also forced, deterministically, so that no outcome depends on thread scheduling: the
racers' stores meet after their first read (every racer decides from the same version, so all
but one conditional write must fail) and, where the winner is chosen, it writes first; the
losers' writes really fail and their retries are really refused.

The prepared game of each test is restored from a raw copy of its item before every round. The
crash test runs a container in a child process that SIGKILLs itself right after its commit.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from engine import (
    Code,
    Game,
    IllegalMove,
    LetItStand,
    MenteurError,
    Move,
    Phase,
    Play,
    Shout,
    apply,
    settle,
)
from engine.cards import rank_of
from handlers import callbacks, plan, render
from handlers.callbacks import Kind
from handlers.text import t
from infra.harness import GROUP, Person, people
from infra.harness.screens import button
from infra.harness.stack import Container, Outcomes, Stack, held, open_game
from infra.harness.updates import Reply

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None, reason="Node.js (`node`) is not on PATH: dynalite cannot run"
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHOUT_ROUNDS = 204  # 2 to 7 shouters in turn: 34 rounds of each
FREE_ROUNDS = 24
WAIT = 20.0  # seconds a racer waits for the others before the test fails (never reached)


# --- fixtures and helpers ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with Stack() as running:
        yield running


@pytest.fixture
def outcomes() -> Iterator[Outcomes]:
    with Outcomes().installed() as collected:
        yield collected


@pytest.fixture(scope="module")
def racers(stack: Stack) -> list[Container]:
    """Seven containers, one per racer."""
    return [stack.container(seed=100 + i) for i in range(7)]


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in threads of their own, released together by a barrier."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(WAIT)
            results[i] = calls[i]()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 2)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads), "a racer is stuck"
    return results


def read_together(containers: list[Container]) -> None:
    """Each container's first read waits for the others' first read: all decide from the same
    version, so all but one conditional write must fail."""
    barrier = threading.Barrier(len(containers))
    for c in containers:
        first = [True]

        def meet(record: object, first: list[bool] = first) -> None:
            if first[0]:
                first[0] = False
                barrier.wait(WAIT)

        c.store.after_load = meet


def writes_first(winner: Container, losers: list[Container]) -> None:
    """The losers' writes wait until the winner's has committed."""
    committed = threading.Event()
    winner.store.after_save = lambda record: committed.set()
    for c in losers:
        c.store.before_save = lambda record: _wait(committed)


def _wait(event: threading.Event) -> None:
    assert event.wait(WAIT), "the designated winner never committed"


def unhook(containers: list[Container]) -> None:
    for c in containers:
        c.store.after_load = c.store.before_save = c.store.after_save = None


def set_clocks(containers: list[Container], now: float) -> None:
    for c in containers:
        c.clock.now = now


def refusal(game: Game, move: Move, now: float) -> MenteurError:
    """The engine's reason for refusing `move` in `game` (it must refuse it)."""
    with pytest.raises(MenteurError) as refused:
        apply(game, move, now)
    return refused.value


@dataclass
class Prepared:
    """A game set up through the bot, kept as its raw item to be restored before each round,
    with the buttons it showed then: name → (chat, message id, callback data)."""

    chat: int
    item: dict[str, Any]
    game: Game
    version: int
    now: float
    players: dict[int, Person]
    buttons: dict[str, tuple[int, int, str]]

    def restore(self, stack: Stack, containers: list[Container]) -> None:
        stack.restore(self.item)
        unhook(containers)
        set_clocks(containers, self.now)

    def press(self, stack: Stack, person: Person, name: str) -> dict[str, Any]:
        """A fresh update of `person` pressing the button kept as `name`."""
        chat, message_id, data = self.buttons[name]
        return stack.updates.press(person, chat, message_id, data, now=self.now)


def prepare(stack: Stack, c: Container, chat: int, **more: tuple[int, int, str]) -> Prepared:
    """Keep the chat's game as it is now, with the table's buttons (and `more`)."""
    record = stack.record(chat)
    assert record.game is not None
    players = {p.id: p for p in people(len(record.game.ids))}
    table = stack.table_message(chat)
    shown = {
        kind.name.lower(): (chat, table.message_id, data)
        for kind in (Kind.SHOUT, Kind.STAND)
        if (data := button(table, kind)) is not None
    }
    item = stack.snapshot(chat)
    return Prepared(chat, item, record.game, record.version, c.clock(), players, shown | more)


def play_one(
    stack: Stack,
    c: Container,
    game: Game,
    players: dict[int, Person],
    chat: int,
    *,
    truth: bool,
) -> tuple[Person, set[int]]:
    """The awaited player's play through the bot: the true cards when `truth` (and held), one
    card of another rank when not; returns who played what."""
    mover = players[game.awaited]  # type: ignore[index]
    hand = held(game, mover.id)
    true = {card for card in hand if rank_of(card) == game.rank}
    cards = true if truth and true else {min(card for card in hand if card not in true)}
    reply = c.post(stack.people(c).play_update(mover, cards, chat))
    assert reply.status == 200 and reply.text is None, reply
    return mover, cards


# --- 1. Liar! pressed by 2 to 7 players at the same instant --------------------------------------


def test_of_2_to_7_simultaneous_liar_presses_exactly_one_counts(
    stack: Stack, racers: list[Container], outcomes: Outcomes
) -> None:
    chat = GROUP - 1
    c = racers[0]
    everyone = people(8)
    open_game(stack, c, everyone, chat)
    players = {p.id: p for p in everyone}
    # One prepared play that is a lie and one that is true, from the same game.
    prepared: dict[bool, Prepared] = {}
    for _ in range(16):
        game = stack.game(chat)
        mover = players[game.awaited]  # type: ignore[index]
        holds_rank = any(rank_of(card) == game.rank for card in held(game, mover.id))
        truth = holds_rank and True not in prepared
        play_one(stack, c, game, players, chat, truth=truth)
        if truth not in prepared:
            prepared[truth] = prepare(stack, c, chat)
        if len(prepared) == 2:
            break
    assert len(prepared) == 2, "no true play within 16 plays"

    conflicts = 0
    for k in range(SHOUT_ROUNDS):
        truth = (k // 6) % 2 == 0
        prep = prepared[truth]
        n = 2 + k % 6
        rng = random.Random(k)
        liar = prep.game.ids[prep.game.last.seat]  # type: ignore[union-attr]
        shouters = rng.sample([p for p in everyone if p.id != liar], n)
        containers = racers[:n]
        prep.restore(stack, containers)
        forced = (k // 6) % 3 == 0  # a block of 2 to 7 shouters in three, lies and truths
        if forced:
            read_together(containers)
        updates = [prep.press(stack, p, "shout") for p in shouters]
        sends = len(stack.tg.calls("sendMessage", chat_id=chat))

        replies: list[Reply] = at_once(
            *(lambda c=c, u=u: c.post(u) for c, u in zip(containers, updates, strict=True))
        )

        assert all(r.status == 200 for r in replies)
        winners = [p for p, r in zip(shouters, replies, strict=True) if r.text is None]
        assert len(winners) == 1, [r.text for r in replies]
        winner = winners[0]
        game = stack.game(chat)
        assert game == apply(prep.game, Shout(winner.id, prep.game.plays), prep.now)[0]
        assert game.shouted == game.ids.index(winner.id) and game.last is None
        spent = sum(prep.game.bullets) - sum(game.bullets)
        assert spent == (1 if truth else 0)  # the accuser of a lie gets the bullet back
        assert stack.version(chat) == prep.version + 1
        too_late = render.refusal(IllegalMove(Code.ALREADY_CHALLENGED, winner.id), game, "en")
        assert sorted(r.text or "" for r in replies) == sorted([""] + [too_late] * (n - 1))
        results = [outcomes.of(u["update_id"])[-1] for u in updates]
        assert sorted(r["outcome"] for r in results) == sorted(
            ["applied"] + ["refused:already_challenged"] * (n - 1)
        )
        # One challenge, so one new group message: the cards turned over.
        assert len(stack.tg.calls("sendMessage", chat_id=chat)) == sends + 1
        round_conflicts = sum(r["conflicts"] for r in results)
        if forced:
            assert round_conflicts == n - 1  # every loser's write really failed
        conflicts += round_conflicts
        outcomes.clear()
    assert conflicts >= SHOUT_ROUNDS // 3


# --- 2. a shout racing the next player's play ----------------------------------------------------


@pytest.fixture(scope="module")
def after_a_play(stack: Stack, racers: list[Container]) -> Prepared:
    """Four players; the first has played; the next one has selected a card and shows Play."""
    chat = GROUP - 2
    c = racers[0]
    players = {p.id: p for p in people(4)}
    open_game(stack, c, list(players.values()), chat)
    play_one(stack, c, stack.game(chat), players, chat, truth=False)
    game = stack.game(chat)
    player = players[game.awaited]  # type: ignore[index]
    # Selected once (no write), its Play pressed in each round.
    hand = stack.people(c).select(player, {min(held(game, player.id))}, chat)
    data = button(hand, Kind.PLAY)
    assert data is not None, "no Play button after selecting"
    return prepare(stack, c, chat, play=(player.id, hand.message_id, data))


def test_a_shout_and_the_next_play_race_and_exactly_one_wins_either_way(
    stack: Stack, racers: list[Container], after_a_play: Prepared, outcomes: Outcomes
) -> None:
    prep = after_a_play
    chat, game = prep.chat, prep.game
    player = prep.players[game.awaited]  # type: ignore[index]
    mover = game.ids[game.last.seat]  # type: ignore[union-attr]
    shouter = next(p for p in prep.players.values() if p.id not in (player.id, mover))
    cards = callbacks.decode(prep.buttons["play"][2]).cards
    moves: dict[str, Move] = {
        "shout": Shout(shouter.id, game.plays),
        "play": Play(player.id, cards, game.turns),
    }
    a, b = racers[0], racers[1]
    by = {"shout": a, "play": b}
    seen = set()
    for k, forced in enumerate(["shout", "play"] * 3 + [None] * FREE_ROUNDS):
        prep.restore(stack, [a, b])
        updates = {
            "shout": prep.press(stack, shouter, "shout"),
            "play": prep.press(stack, player, "play"),
        }
        if forced is not None:
            read_together([a, b])
            writes_first(by[forced], [by["play" if forced == "shout" else "shout"]])
        # Alternate which is released first, too: no thread gets a head start every time.
        order = ["shout", "play"] if k % 2 else ["play", "shout"]

        results = at_once(*(lambda u=updates[n], c=by[n]: c.post(u) for n in order))

        replies = dict(zip(order, results, strict=True))
        applied = [name for name, reply in replies.items() if reply.text is None]
        assert len(applied) == 1, replies
        won = applied[0]
        lost = "play" if won == "shout" else "shout"
        if forced is not None:
            assert won == forced
        seen.add(won)
        # The same as the winner's move, then the loser's, one after the other.
        expected, _ = apply(game, moves[won], prep.now)
        assert stack.game(chat) == expected
        reason = refusal(expected, moves[lost], prep.now)
        # A play drawn before the challenge names a moment that is over (RULES.md, R6).
        assert reason.code is (Code.STALE if lost == "play" else Code.NEXT_PLAYER_PLAYED)
        assert replies[lost].text == render.refusal(reason, expected, "en")
        assert outcomes.of(updates[lost]["update_id"])[-1]["outcome"] == f"refused:{reason.code}"
        assert outcomes.of(updates[won]["update_id"])[-1]["outcome"] == "applied"
        assert stack.version(chat) == prep.version + 1
        outcomes.clear()
    assert seen == {"shout", "play"}  # both orders were forced, at least


# --- 3. the 45-second timer racing a last-second shout or Let it stand ---------------------------


@pytest.fixture(scope="module")
def final_play(stack: Stack, racers: list[Container]) -> Prepared:
    """Three players; someone has just emptied their hand: a decision is pending."""
    chat = GROUP - 3
    c = racers[0]
    players = {p.id: p for p in people(3)}
    open_game(stack, c, list(players.values()), chat)
    for _ in range(60):
        game = stack.game(chat)
        if game.phase is Phase.DECIDE:
            return prepare(stack, c, chat)
        mover = players[game.awaited]  # type: ignore[index]
        c.post(stack.people(c).play_update(mover, set(sorted(held(game, mover.id))[:4]), chat))
        c.clock.advance(2.0)
    raise AssertionError("no final play")


def race_with_the_timer(  # noqa: PLR0917
    stack: Stack,
    prep: Prepared,
    human: Container,
    box: Container,
    press_as: tuple[Person, str],
    pressed_at: float,
    deadline: float,
    forced: str | None,
) -> tuple[Reply, dict[str, Any], int, int]:
    """From the prepared state, a press (`press_as`: who, which prepared button) handled by
    `human` at `pressed_at` and the timer's fire at `deadline` in `box`, at once; with `forced`
    ("human" or "timer"), that one's write lands first. Returns the press's reply, its update,
    and the writes each made."""
    prep.restore(stack, [human, box])
    human.clock.now, box.clock.now = pressed_at, deadline
    update = prep.press(stack, *press_as)
    if forced is not None:
        read_together([human, box])
        first, then = (human, box) if forced == "human" else (box, human)
        writes_first(first, [then])
    commits = human.store.commits, box.store.commits

    def press() -> Reply:
        return human.post(update)

    def fire() -> dict[str, Any]:
        return box.fire({"chat": prep.chat, "at": deadline})

    reply, _ = at_once(press, fire)
    by_human, by_timer = human.store.commits - commits[0], box.store.commits - commits[1]
    if forced is not None:
        assert (by_human, by_timer) == ((1, 0) if forced == "human" else (0, 1))
    return reply, update, by_human, by_timer


@pytest.mark.parametrize(
    ("who", "kind", "early"),
    [
        ("other", Kind.SHOUT, 0.001),  # a last-second shout by a third player
        ("decider", Kind.SHOUT, 0.001),
        ("decider", Kind.STAND, 0.001),  # Let it stand at the last second
        ("other", Kind.SHOUT, 0.0),  # pressed on the deadline itself: judged too late
        ("decider", Kind.STAND, 0.0),
    ],
)
def test_the_timer_and_a_press_at_the_deadline_have_exactly_one_outcome(  # noqa: PLR0917
    stack: Stack,
    racers: list[Container],
    final_play: Prepared,
    outcomes: Outcomes,
    who: str,
    kind: Kind,
    early: float,
) -> None:
    prep = final_play
    chat, game = prep.chat, prep.game
    assert game.phase is Phase.DECIDE and game.deadline is not None and game.last is not None
    deadline = game.deadline
    finisher = game.ids[game.last.seat]
    decider = game.awaited
    other = next(p for p in game.ids if p not in (finisher, decider))
    person = prep.players[decider if who == "decider" else other]  # type: ignore[index]
    human, box = racers[0], racers[1]  # the timer function's container: `box`
    move: Move = (Shout if kind is Kind.SHOUT else LetItStand)(person.id, game.plays)
    pressed_at = deadline - early
    timed_out, _ = settle(game, deadline)
    if early:
        by_hand, _ = apply(game, move, pressed_at)
    else:
        by_hand = timed_out  # late: the press settles the deadline, as the timer would
    for forced in ["human", "timer", "human", "timer"] + [None] * FREE_ROUNDS:
        sends = len(stack.tg.calls("sendMessage", chat_id=chat))
        reply, update, by_human, by_timer = race_with_the_timer(
            stack, prep, human, box, (person, kind.name.lower()), pressed_at, deadline, forced
        )
        assert by_human + by_timer == 1, "exactly one write decides the final play"
        stored = stack.game(chat)
        expected = by_hand if by_human else timed_out
        assert stored == expected
        wins = [
            c.params["text"]
            for c in stack.tg.calls("sendMessage", chat_id=chat)[sends:]
            if "wins" in c.params["text"]
        ]
        assert len(wins) == (1 if stored.phase is Phase.OVER else 0), wins
        result = outcomes.of(update["update_id"])[-1]["outcome"]
        timer_result = next(line for line in outcomes.lines if line["kind"] == "timer")["outcome"]
        if by_human and early:
            assert (result, timer_result, reply.text) == ("applied", "nothing_due", None)
        else:
            # The press came too late: the table had already let the play stand (or it lets
            # it stand now, on this very press, when the press is the first to be handled).
            reason = refusal(timed_out, move, pressed_at)
            assert reason.code is Code.GAME_OVER
            assert result == f"refused:{reason.code}"
            assert reply.text == render.refusal(reason, timed_out, "en")
            assert timer_result == ("nothing_due" if by_human else "applied")
        outcomes.clear()


# --- 3b. R20's clock racing a play in its last millisecond ---------------------------------------


@pytest.fixture(scope="module")
def clock_turn(stack: Stack, racers: list[Container]) -> Prepared:
    """Three players, the clock of 90 seconds running on the first to play, who has selected a
    card and shows Play."""
    chat = GROUP - 7
    c = racers[0]
    players = {p.id: p for p in people(3)}
    game = open_game(stack, c, list(players.values()), chat)
    assert game.clock == 90 and game.deadline is not None
    player = players[game.awaited]  # type: ignore[index]
    # Selected once (no write), its Play pressed in each round.
    hand = stack.people(c).select(player, {min(held(game, player.id))}, chat)
    data = button(hand, Kind.PLAY)
    assert data is not None, "no Play button after selecting"
    return prepare(stack, c, chat, play=(player.id, hand.message_id, data))


@pytest.mark.parametrize("early", [0.001, 0.0])  # in the last millisecond; on the deadline
def test_r20_the_clock_and_a_play_at_its_deadline_have_exactly_one_outcome(
    stack: Stack, racers: list[Container], clock_turn: Prepared, outcomes: Outcomes, early: float
) -> None:
    prep = clock_turn
    chat, game = prep.chat, prep.game
    assert game.phase is Phase.PLAY and game.deadline is not None
    deadline = game.deadline
    person = prep.players[game.awaited]  # type: ignore[index]
    move = Play(person.id, callbacks.decode(prep.buttons["play"][2]).cards, game.turns)
    human, box = racers[0], racers[1]  # the timer function's container: `box`
    pressed_at = deadline - early
    timed_out, _ = settle(game, deadline)
    assert timed_out.turns == game.turns + 1, "the table played"
    by_hand = apply(game, move, pressed_at)[0] if early else timed_out
    seen = set()
    for forced in ["human", "timer", "human", "timer"] + [None] * FREE_ROUNDS:
        reply, update, by_human, by_timer = race_with_the_timer(
            stack, prep, human, box, (person, "play"), pressed_at, deadline, forced
        )
        assert by_human + by_timer == 1, "exactly one write decides the turn"
        seen.add("human" if by_human else "timer")
        stored = stack.game(chat)
        played = bool(by_human and early)
        assert stored == (by_hand if played else timed_out), "never both, never neither"
        note = (stack.record(chat).note or "").replace("\u2068", "").replace("\u2069", "")
        assert ("the table played for them" in note) is not played, note
        result = outcomes.of(update["update_id"])[-1]["outcome"]
        timer_result = next(line for line in outcomes.lines if line["kind"] == "timer")["outcome"]
        if played:
            assert (result, timer_result, reply.text) == ("applied", "nothing_due", None)
        else:
            # Too late: the table had played (or plays now, on this very press, when the press
            # is handled first), and the Play was drawn for a moment that is over.
            reason = refusal(timed_out, move, pressed_at)
            assert reason.code is Code.STALE
            assert result == f"refused:{reason.code}"
            assert reply.text == render.refusal(reason, timed_out, "en")
            assert timer_result == ("nothing_due" if by_human else "applied")
        outcomes.clear()
    assert seen == {"human", "timer"}


def test_r20_a_reminders_timer_fired_twice_at_once_sends_one_reminder(
    stack: Stack, racers: list[Container], clock_turn: Prepared, outcomes: Outcomes
) -> None:
    prep = clock_turn
    chat, game = prep.chat, prep.game
    assert game.deadline is not None
    person = game.awaited
    at = game.deadline - game.clock / 3
    first, second = racers[0], racers[1]
    for forced in [True] * 4 + [False] * FREE_ROUNDS:
        prep.restore(stack, [first, second])
        set_clocks([first, second], at)
        if forced:
            read_together([first, second])
        sent = len(stack.tg.calls("sendMessage", chat_id=person))
        commits = first.store.commits + second.store.commits

        at_once(*(lambda c=c: c.fire({"chat": chat, "at": at}) for c in (first, second)))

        assert first.store.commits + second.store.commits - commits == 1, "one write"
        assert len(stack.tg.calls("sendMessage", chat_id=person)) == sent + 1, "one reminder"
        assert stack.record(chat).reminded == game.turns and stack.game(chat) == game
        assert sorted(line["outcome"] for line in outcomes.lines) == ["nothing_due", "reminded"]
        outcomes.clear()


# --- 4. one update delivered three times at once -------------------------------------------------


def test_an_update_delivered_three_times_at_once_is_applied_once(
    stack: Stack, racers: list[Container], after_a_play: Prepared, outcomes: Outcomes
) -> None:
    trio = racers[:3]
    # A command whose every repetition would be legal: only the update id can stop it.
    lobby_chat = GROUP - 4
    ann = people(1)[0]
    trio[0].post(stack.updates.message(ann, "/newgame", lobby_chat))
    lobby = prepare(stack, trio[0], lobby_chat)
    # And a press of Play.
    prep = after_a_play
    game = prep.game
    player = prep.players[game.awaited]  # type: ignore[index]
    play = prep.press(stack, player, "play")
    for k in range(2 * (6 + FREE_ROUNDS // 2)):
        forced = k % 4 < 2
        if k % 2 == 0:
            lobby.restore(stack, trio)
            update = stack.updates.message(ann, "/addbot", lobby_chat)
            chat, before = lobby_chat, lobby
        else:
            prep.restore(stack, trio)
            update = dict(play, update_id=stack.updates.next_id())
            chat, before = prep.chat, prep
        if forced:
            read_together(trio)

        replies: list[Reply] = at_once(*(lambda c=c, u=update: c.post(u) for c in trio))

        assert all(r.status == 200 and r.text is None for r in replies)
        results = sorted(line["outcome"] for line in outcomes.of(update["update_id"]))
        assert results == ["applied", "duplicate", "duplicate"]
        record = stack.record(chat)
        assert record.version == before.version + 1
        assert record.updates.count(update["update_id"]) == 1
        assert record.game is not None
        if chat == lobby_chat:
            assert len(record.game.ids) == len(before.game.ids) + 1  # one robot, not three
        else:
            cards = callbacks.decode(play["callback_query"]["data"]).cards
            assert record.game == apply(game, Play(player.id, cards, game.turns), prep.now)[0]
        outcomes.clear()


# --- 5. a container killed between its write and its sends ---------------------------------------


def crash_after_write(stack: Stack, update: dict[str, Any], now: float) -> None:
    """Deliver `update` to a container in another process that dies right after the commit."""
    config = {
        "env": stack.dynalite.env(),
        "now": now,
        "table": stack.settings().table_name,
        "api_base_url": stack.tg.base_url,
    }
    crashed = subprocess.run(
        [
            sys.executable,
            "-m",
            "infra.harness.stack",
            "crash-after-write",
            json.dumps(config),
            json.dumps(update),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr.decode()


def assert_screens_show(stack: Stack, chat: int, now: float) -> None:
    """The table and every private hand read exactly as rendered from the stored game."""
    record = stack.record(chat)
    game = record.game
    assert game is not None
    expected = render.table(
        game, record.place, record.lang, now, record.note, not_back=record.not_back()
    )
    shown = stack.table_message(chat)
    assert shown.text == expected.text
    assert [b.get("callback_data") for b in _buttons(shown)] == [
        b.data for row in expected.buttons for b in row
    ]
    for player in game.ids:
        expected = plan.hand_screen(record, game, player, now)
        message = stack.tg.message(player, record.hand_msgs[player])
        assert message is not None
        assert message.text == expected.text, player
        assert [b.get("callback_data") for b in _buttons(message)] == [
            b.data for row in expected.buttons for b in row
        ], player


def _buttons(message: Any) -> list[dict[str, Any]]:
    rows = (message.reply_markup or {}).get("inline_keyboard", [])
    return [b for row in rows for b in row]


@pytest.mark.parametrize("kind", ["play", "shout"])
def test_after_a_crash_between_the_write_and_the_sends_the_retry_redraws_every_screen(
    stack: Stack, racers: list[Container], outcomes: Outcomes, kind: str
) -> None:
    chat = GROUP - (5 if kind == "play" else 6)
    c = racers[0]
    players = {p.id: p for p in people(3)}
    open_game(stack, c, list(players.values()), chat)
    if kind == "shout":
        play_one(stack, c, stack.game(chat), players, chat, truth=False)
    before = stack.record(chat)
    game = before.game
    assert game is not None
    now = c.clock()
    if kind == "play":
        mover = players[game.awaited]  # type: ignore[index]
        cards = {min(held(game, mover.id))}
        update = stack.people(c).play_update(mover, cards, chat)
        move: Move = Play(mover.id, sum(1 << card for card in cards), game.turns)
    else:
        liar = game.ids[game.last.seat]  # type: ignore[union-attr]
        accuser = next(p for p in players.values() if p.id != liar)
        table = stack.table_message(chat)
        data = button(table, Kind.SHOUT)
        assert data is not None
        update = stack.updates.press(accuser, chat, table.message_id, data, now=now)
        move = Shout(accuser.id, game.plays)
    calls = len(sent(stack))

    crash_after_write(stack, update, now)

    after = stack.record(chat)
    assert after.version == before.version + 1, "the write was committed"
    assert after.game == apply(game, move, now)[0]
    assert len(sent(stack)) == calls, "and nothing was sent"
    # Telegram got no answer: it sends the update again, to a fresh container.
    restarted = stack.container(seed=77)
    restarted.clock.now = now
    reply = restarted.post(update)
    assert reply.status == 200 and reply.text is None
    assert outcomes.of(update["update_id"])[-1]["outcome"] == "duplicate"
    retried = stack.record(chat)
    assert retried.game == after.game, "applied once"
    # What the write owed the group (the challenge's message) is sent by the retry, which takes
    # it in a write of its own; a play owes the group no message.
    owed = kind == "shout"
    assert len(challenges(stack, chat)) == owed, "the challenge told once"
    assert retried.version == after.version + owed
    assert retried.undelivered() == []
    assert_screens_show(stack, chat, now)
    # Telegram sends it yet again (the retry's answer lost too): nothing more is sent.
    sends = len(stack.tg.calls("sendMessage", chat_id=chat))
    assert restarted.post(update).status == 200
    assert len(stack.tg.calls("sendMessage", chat_id=chat)) == sends
    assert len(challenges(stack, chat)) == owed
    assert stack.record(chat).version == retried.version


def sent(stack: Stack) -> list[Any]:
    """Every call to the Bot API but its questions (the player's membership is asked before
    the write)."""
    return [c for c in stack.tg.calls() if c.method not in ("getChatMember", "getMe")]


def challenges(stack: Stack, chat: int) -> list[str]:
    title = t("en", "challenge_title")
    sent = stack.tg.calls("sendMessage", chat_id=chat)
    return [str(c.params["text"]) for c in sent if c.ok and str(c.params["text"]).startswith(title)]
