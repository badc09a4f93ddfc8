"""Whole games through the bot in which people stop answering (R20), on a simulated clock.

People play as the computer player's policy would (`engine.strategy` on their own view), by
pressing the bot's buttons (Play as their hand shows it once the cards are ticked; Liar! and
Let it stand where they see them), a few seconds into each moment (now and then much later,
about their deadline); some of them stop answering for good, at a random point of the game. Nobody
waits for real time: one clock, moved from event to event, serves the bot's container and its
timers alike. The timers are those of AWS: the bot's own `SqsTimers`, whose messages a simulated
delay queue delivers at their `DelaySeconds` plus up to a second (SQS: "within about a second"),
to the timer function; and the scheduled sweep once a minute, at a random second of it. Some
tables seat computer players, so that a game may also end for want of people (the first game
of each call always does).

`play_stalling_games(seeds)` plays one game a seed and returns what the scale test asserts and
the benchmark prints: how each game ended, and how long each awaited player was waited for.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from engine import (
    Game,
    LetItStand,
    MenteurError,
    Move,
    Phase,
    Play,
    Shout,
    apply,
    strategy,
    view,
)
from handlers import callbacks
from handlers.callbacks import Kind
from handlers.runtime import SqsTimers
from handlers.text import FSI, PDI, t
from infra.fake_telegram import StoredMessage
from infra.harness import GROUP, Clock, Person, people
from infra.harness.screens import button
from infra.harness.stack import Container, Stack, open_game

CLOCK = 30  # seconds: R20's shortest choice
SQS_LATE = 1.0  # a delayed message arrives up to this long after its DelaySeconds
SWEEP = 60.0  # the scheduled rule's period
REACTION = (0.5, 1.0, 2.0, 3.0)  # seconds a person who answers takes to press
SLOW = 0.03  # how often such a person takes their time, to about their deadline
SILENT = 0.7  # how often a person stops answering at some point of the game
NO_PERSON = t("en", "stopped_no_person").replace(FSI, "").replace(PDI, "")


@dataclass
class Waits:
    """How long awaited players were waited for, one entry a moment (seconds)."""

    beyond_clock: list[float] = field(default_factory=list)  # a person to play, past the clock
    after_deadline: list[float] = field(default_factory=list)  # the table's move, past it
    decisions: list[float] = field(default_factory=list)  # a final play's decider, in all

    def add(self, other: Waits) -> None:
        self.beyond_clock += other.beyond_clock
        self.after_deadline += other.after_deadline
        self.decisions += other.decisions


@dataclass
class Ending:
    """How the games ended, and what the clock did in them."""

    games: int = 0
    won: int = 0
    no_person: int = 0  # stopped for want of people (R20)
    other_stops: int = 0
    table_plays: int = 0  # the table played for a person whose clock ran out
    clock_forfeits: int = 0  # a second run-out in a row
    refused: int = 0  # presses refused: the clock had decided first, or the moment passed
    players: Counter[int] = field(default_factory=Counter)
    waits: Waits = field(default_factory=Waits)

    def add(self, other: Ending) -> None:
        for name in ("games", "won", "no_person", "other_stops", "table_plays"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.clock_forfeits += other.clock_forfeits
        self.refused += other.refused
        self.players += other.players
        self.waits.add(other.waits)


class DelayQueue:
    """An SQS delay queue as the timer function meets it: a message arrives `DelaySeconds`
    after it was sent, plus up to `SQS_LATE`. `send_message` is the boto3 client's, for
    `SqsTimers`."""

    def __init__(self, clock: Callable[[], float], rng: random.Random) -> None:
        self.clock = clock
        self.rng = rng
        self.pending: list[tuple[float, int, str]] = []
        self.sent = 0

    def reset(self, rng: random.Random) -> None:
        """Empty, with its delays drawn from `rng`: for a game of its own."""
        self.rng = rng
        self.pending.clear()

    def send_message(self, *, QueueUrl: str, MessageBody: str, DelaySeconds: int) -> None:
        self.sent += 1
        at = self.clock() + DelaySeconds + self.rng.uniform(0.0, SQS_LATE)
        heapq.heappush(self.pending, (at, self.sent, MessageBody))

    def next_at(self) -> float:
        return self.pending[0][0] if self.pending else math.inf

    def pop(self) -> str:
        return heapq.heappop(self.pending)[2]


@dataclass
class _Moment:
    """What was awaited, since when."""

    number: int
    since: float
    phase: Phase
    awaited: int | None
    deadline: float | None
    clock: int


class Stalling:
    """One game in one group chat: people who answer, people who stop, computer players."""

    def __init__(self, stack: Stack, c: Container, seed: int, *, nobody: bool = False) -> None:
        """`nobody`: one person among computer players, silent from the start, so that the
        game ends for want of people."""
        self.stack, self.c = stack, c
        self.chat = GROUP - 10_000 - seed
        self.rng = random.Random(seed)
        total = 2 + seed % 7
        if nobody:
            total = max(total, 3)
            self.robots = total - 1
        else:
            self.robots = self.rng.choice((0, 1, 2, 2)) if total > 2 else 0
        self.people = people(total - self.robots)
        # After how many plays of the game each person stops answering; None: never.
        self.stops = {
            p.id: self.rng.randrange(5 * total) if self.rng.random() < SILENT else None
            for p in self.people
        }
        if nobody:
            self.stops = dict.fromkeys(self.stops, 0)
        assert isinstance(c.timers, SqsTimers) and isinstance(c.timers.client, DelayQueue)
        self.queue = c.timers.client
        self.queue.reset(random.Random(seed * 7919))
        self.sweep_at = math.floor(c.clock() / SWEEP) * SWEEP + self.rng.uniform(0, SWEEP)
        self.ending = Ending(games=1)
        self.ending.players[total] += 1
        self.moment: _Moment | None = None
        self.plans: dict[tuple[int, int, int], tuple[float, Move] | None] = {}

    def game(self) -> Game:
        return self.stack.game(self.chat)

    def answering(self, game: Game, player: int) -> bool:
        stop = self.stops.get(player)
        return player > 0 and (stop is None or game.plays < stop)

    def play(self) -> Game:
        command = f"/newgame {CLOCK}"
        game = open_game(
            self.stack, self.c, self.people, self.chat, command=command, robots=self.robots
        )
        assert game.clock == CLOCK
        for _ in range(20_000):
            self.watch(game)
            if game.phase is Phase.OVER:
                return game
            game = self.step(game)
        raise AssertionError(f"chat {self.chat}: the game never ended")

    def step(self, game: Game) -> Game:
        """The next thing to happen: a press, an SQS message, or the sweep."""
        now = self.c.clock()
        chosen = self.choose(game, now)
        timer_at = min(self.queue.next_at(), self.sweep_at)
        if chosen is not None and chosen[0] < timer_at:
            self.c.clock.now = chosen[0]
            return self.press(game, chosen[1], chosen[0])
        self.c.clock.now = timer_at
        if timer_at == self.sweep_at:
            self.sweep_at += SWEEP
            self.c.sweep()
        else:
            assert self.c.fire(self.queue.pop()) == {"batchItemFailures": []}
        return self.game()

    def choose(self, game: Game, now: float) -> tuple[float, Move] | None:
        """The first press of the people still answering, and when it comes. Each decides
        once a moment (and play): what they meant to press, they press when they meant to."""
        options = []
        for player in game.ids:
            if not self.answering(game, player):
                continue
            key = (player, game.turns, game.plays)
            if key not in self.plans:
                move = strategy.choose(view(game, player, now), self.rng)
                delay = self.rng.choice(REACTION)
                if self.rng.random() < SLOW:
                    delay = self.rng.uniform(0.9, 1.1) * (CLOCK if isinstance(move, Play) else 45)
                self.plans[key] = None if move is None else (now + delay, move)
            plan = self.plans[key]
            if plan is not None:
                options.append(plan)
        return min(options, key=lambda o: o[0]) if options else None

    def press(self, game: Game, move: Move, now: float) -> Game:
        """Press the button that makes `move`: applied as the engine says, or refused with a
        reason when the clock decided first (the stored game is then as the clock left it)."""
        person = next(p for p in self.people if p.id == move.player)  # type: ignore[union-attr]
        match move:
            case Play(_, cards, moment):
                # The Play button the hand shows once these cards are ticked (the ticking, a
                # press a card, is the other scale test's: it costs a third of these games).
                assert moment is not None, "the policy names the moment it played at"
                message = self.stack.hand_message(person, self.chat)
                place = self.stack.record(self.chat).place
                data = callbacks.encode(place.press(Kind.PLAY, moment, cards=cards))
            case Shout() | LetItStand():
                kind = Kind.SHOUT if isinstance(move, Shout) else Kind.STAND
                message, data = self.a_button_for(person, kind)
            case _:
                raise AssertionError(f"the computer player does not {move}")
        updates = self.stack.updates
        reply = self.c.post(
            updates.press(person, message.chat_id, message.message_id, data, now=now)
        )
        assert reply.status == 200, reply
        after = self.game()
        try:
            expected, _ = apply(game, move, now)
        except MenteurError:
            assert reply.text, "a press the engine refuses is answered with why"
            self.ending.refused += 1
            return after
        assert reply.text is None and after == expected, (move, reply)
        return after

    def a_button_for(self, person: Person, kind: Kind) -> tuple[StoredMessage, str]:
        record = self.stack.record(self.chat)
        messages: list[StoredMessage | None] = [self.stack.table_message(self.chat)]
        if record.final_msg is not None:
            messages.append(self.stack.tg.message(self.chat, record.final_msg))
        if kind is Kind.SHOUT:
            messages.append(self.stack.hand_message(person, self.chat))
        shown = [(m, data) for m in messages if m is not None and (data := button(m, kind))]
        assert shown, f"no {kind.name} button for {person.name}"
        return shown[0]

    # --- what is measured --------------------------------------------------------------------

    def watch(self, game: Game) -> None:
        """After each step: when the awaited moment changed, how long it had waited."""
        moment = self.moment
        if moment is not None and (game.turns != moment.number or game.phase is Phase.OVER):
            self.waited(moment, game)
            moment = None
        if game.phase is Phase.OVER:
            self.moment = None
            self.ended(game)
        elif moment is None:
            self.moment = _Moment(
                game.turns, game.updated, game.phase, game.awaited, game.deadline, game.clock
            )

    def waited(self, moment: _Moment, game: Game) -> None:
        now = self.c.clock()
        if moment.phase is Phase.DECIDE:
            self.ending.waits.decisions.append(now - moment.since)
            return
        person = moment.awaited
        if person is None or person < 0 or moment.deadline is None:
            return
        self.ending.waits.beyond_clock.append(now - moment.since - moment.clock)
        if now >= moment.deadline:  # the clock decided it
            self.ending.waits.after_deadline.append(now - moment.deadline)
            seat = game.seat_of(person)
            if seat is not None and seat in game.out:
                self.ending.clock_forfeits += 1
            else:
                self.ending.table_plays += 1

    def ended(self, game: Game) -> None:
        if game.winner is not None:
            self.ending.won += 1
        elif NO_PERSON in (self.stack.record(self.chat).note or "").replace(FSI, ""):
            self.ending.no_person += 1
        else:
            self.ending.other_stops += 1


def play_stalling_games(seeds: list[int]) -> Ending:
    """One game a seed, one after the other, each in a group chat of its own; in the first,
    the only person stops answering at once, among computer players."""
    ending = Ending()
    # No outcome lines: nothing here reads them (test_logs does), and pytest would hold
    # thousands of them for the report.
    with Stack(store="memory", sockets=False, log_level="WARNING") as stack:
        clock = Clock()
        queue = DelayQueue(clock, random.Random(0))
        timers = SqsTimers(queue, "https://sqs.example/timers")
        c = stack.container(clock, seeds[0] if seeds else 0, timers=timers)
        for seed in seeds:
            table = Stalling(stack, c, seed, nobody=seed == seeds[0])
            table.play()
            ending.add(table.ending)
    return ending
