"""Many whole games: through the whole bot (webhook handler, store, fake Telegram), and through
the engine alone, with the invariants I1-I4 checked after every step.

Through the bot, every player is a person driven by a computer player's policy (the levels of
`engine.strategy`, one a game in turn, on that player's own view), and every move is a press of
a button the bot drew: card toggles then Play in the private hand, Liar! and Let it stand on the
table (or the final play's message). The store is the in-memory `MemoryStore` (same conditional
semantics as DynamoDB; the games run one update at a time, so no race is at stake here:
test_races.py runs those on dynalite). Nobody waits for the wall clock: the containers' clock is
set by the test. The bot reaches the fake Telegram in process (`Stack(sockets=False)`): a game
makes a few thousand Bot API requests, and over loopback HTTP the sockets, the HTTP client and
the server's threads cost as much CPU as the bot itself; every other test of the bot goes over
real HTTP.

The games are dealt out in shares, each a test of its own (`slow`), which pytest-xdist hands to
whichever worker is free: 20 shares of 10 games through the bot, 40 of 250 games through the engine,
and 10 shares of 20 games through the bot in which people stop answering (`infra.harness.stalling`,
R20), on a simulated clock with SQS's delays (docs/performance.md says what each kind of share
costs). Seeds go round the shares, so each share has every table size from 2 to 8; in each share,
the first game's deciders always leave a final play to the timer, so every share also ends a game at
the 45th second (and the first stalling game, for want of people).
These are the suite's longest tests on purpose: these are the sizes the proof asks for.
`MENTEUR_STACK_GAMES`, `MENTEUR_ENGINE_GAMES` and `MENTEUR_STALLING_GAMES` set smaller runs
while working on the code (never in CI), and `-m "not slow"` leaves them out.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field

import pytest

from engine import (
    DECISION_SECONDS,
    Game,
    LetItStand,
    Move,
    Phase,
    Play,
    Shout,
    apply,
    cards_in,
    count,
    strategy,
    view,
)
from engine import events as ev
from handlers import callbacks, timer
from handlers.callbacks import Kind
from infra.fake_telegram import StoredMessage
from infra.harness import GROUP, Person, people
from infra.harness.screens import button, shown_cards
from infra.harness.stack import Container, Stack, held, open_game
from infra.harness.stalling import play_stalling_games
from tests.unit.test_properties import check_invariants, may_move, play_out

STACK_GAMES = int(os.environ.get("MENTEUR_STACK_GAMES", "200"))
ENGINE_GAMES = int(os.environ.get("MENTEUR_ENGINE_GAMES", "10000"))
STALLING_GAMES = int(os.environ.get("MENTEUR_STALLING_GAMES", "200"))
STACK_SHARES = 20
LEVELS = sorted(strategy.LEVELS)
ENGINE_SHARES = 40
STALLING_SHARES = 10
IDLE_DECIDER = 0.25  # how often the decider of a final play lets the 45 seconds run out
BIDI = str.maketrans("", "", "\u2068\u2069\u200f")
RANKING_ROW = re.compile(r"^\d+\. (.+?) · ")


def expected_ranking(game: Game) -> tuple[int, ...]:
    """R15 and R19, written again from the rules: the winner; then fewest cards, the earlier
    seat first on a tie; then those who forfeited, the latest first."""
    assert game.winner is not None
    rest = [s for s in range(len(game.ids)) if s != game.winner and s not in game.out]
    rest.sort(key=lambda s: (count(game.hands[s]), s))
    return tuple(game.ids[s] for s in [game.winner, *rest, *reversed(game.out)])


@dataclass
class Tally:
    games: int = 0
    moves: Counter[str] = field(default_factory=Counter)
    timeouts: int = 0
    players: Counter[int] = field(default_factory=Counter)

    def add(self, other: Tally) -> None:
        self.games += other.games
        self.moves += other.moves
        self.timeouts += other.timeouts
        self.players += other.players


class Table:
    """One game in one group chat, played by people who press what the bot shows them."""

    def __init__(
        self,
        stack: Stack,
        c: Container,
        chat: int,
        players: list[Person],
        seed: int,
        *,
        wait_out_final_plays: bool = False,
    ):
        self.stack, self.c, self.chat = stack, c, chat
        self.wait_out = wait_out_final_plays  # nobody answers a final play: the timer does
        self.players = {p.id: p for p in players}
        self.rng = random.Random(seed)
        # One level at every seat, by game, in turn within a share (seeds go round the shares):
        # easy lets some final plays stand, as no other level does.
        self.level = strategy.LEVELS[LEVELS[seed // STACK_SHARES % len(LEVELS)]]
        self.tally = Tally(games=1)
        self.tally.players[len(players)] += 1

    def game(self) -> Game:
        return self.stack.game(self.chat)

    def check(self, game: Game) -> None:
        """I1-I4 on the stored game; each private chat shows its owner's hand, exactly."""
        check_invariants(game)
        if game.phase in (Phase.PLAY, Phase.DECIDE):
            hands = self.stack.record(self.chat).hand_msgs
            for player in game.ids:
                message = self.stack.tg.message(player, hands[player])
                assert shown_cards(message) == held(game, player), self.players[player]

    def play(self) -> Game:
        game = open_game(self.stack, self.c, list(self.players.values()), self.chat)
        while True:
            self.check(game)
            if game.phase is Phase.OVER:
                return game
            now = self.c.clock()
            idle = game.awaited if game.phase is Phase.DECIDE else None
            if self.rng.random() >= IDLE_DECIDER:
                idle = None
            if self.wait_out and game.phase is Phase.DECIDE:
                move = None
            else:
                move = self.choose(game, now, idle)
            game = self.let_the_timer_fire(game) if move is None else self.press(game, move, now)
            self.c.clock.advance(self.rng.choice((0.5, 1.0, 2.0, 3.0)))

    def choose(self, game: Game, now: float, idle: int | None) -> Move | None:
        for player in self.rng.sample(game.ids, len(game.ids)):
            if player != idle and may_move(game, player, now):
                move = self.level(view(game, player, now), self.rng)
                if move is not None:
                    return move
        return None

    def let_the_timer_fire(self, game: Game) -> Game:
        assert game.phase is Phase.DECIDE and game.deadline is not None, "only a decision waits"
        self.c.clock.now = game.deadline
        timer.handle({"source": "aws.events"}, self.c.rt)  # the scheduled sweep
        after = self.game()
        assert after.phase is Phase.OVER and after.winner == game.last.seat  # type: ignore[union-attr]
        self.tally.timeouts += 1
        return after

    def press(self, game: Game, move: Move, now: float) -> Game:
        """Press the button that makes `move`; the stored game must be the engine's next state."""
        stack, person = self.stack, self.players[move.player]  # type: ignore[union-attr]
        match move:
            case Play(_, cards, moment):
                message = stack.people(self.c).select(person, set(cards_in(cards)), self.chat)
                data = button(message, Kind.PLAY)
                assert data is not None, "no Play button after selecting"
                press = callbacks.decode(data)
                assert (press.cards, press.number) == (cards, moment)
            case Shout() | LetItStand():
                kind = Kind.SHOUT if isinstance(move, Shout) else Kind.STAND
                message, data = self.a_button_for(person, kind)
            case _:
                raise AssertionError(f"the computer player does not {move}")
        update = stack.updates.press(person, message.chat_id, message.message_id, data, now=now)
        reply = self.c.post(update)
        assert reply.status == 200 and reply.text is None, (move, reply)
        self.tally.moves[type(move).__name__] += 1
        after = self.game()
        expected, _ = apply(game, move, now)
        assert after == expected, move
        return after

    def a_button_for(self, person: Person, kind: Kind) -> tuple[StoredMessage, str]:
        """Any message showing the person a button of that kind: the table, the final play's
        message, or (for Liar!) the person's own hand."""
        stack = self.stack
        record = stack.record(self.chat)
        messages: list[StoredMessage | None] = [stack.table_message(self.chat)]
        if record.final_msg is not None:
            messages.append(stack.tg.message(self.chat, record.final_msg))
        if kind is Kind.SHOUT:
            messages.append(stack.hand_message(person, self.chat))
        shown = [(m, data) for m in messages if m is not None and (data := button(m, kind))]
        assert shown, f"no {kind.name} button anywhere for {person.name}"
        return self.rng.choice(shown)

    def check_the_end(self, game: Game) -> None:
        assert game.phase is Phase.OVER, "the game ended"
        assert game.winner is not None, "a game between players has a winner"
        ranking = expected_ranking(game)
        assert game.ranking() == ranking
        names = dict(zip(game.ids, game.names, strict=True))
        table = self.stack.table_message(self.chat).text or ""
        shown = [
            found[1]
            for line in table.translate(BIDI).split("\n")
            if (found := RANKING_ROW.match(line))
        ]
        assert shown == [names[p] for p in ranking], table
        winner = names[ranking[0]]
        announced = [
            m.text
            for m in self.stack.tg.chat_messages(self.chat)
            if m.text and m.text.translate(BIDI).startswith(f"{winner} wins")
        ]
        # Announced once; or not yet when the group's minute of new messages was used up
        # (Telegram's flood limit): then the end is owed, sent by the timer once it has room.
        owed = self.stack.record(self.chat).undelivered()
        assert len(announced) == 1 or (not announced and owed)


def play_through_the_bot(seeds: list[int]) -> Tally:
    """Whole games, one after the other, one per group chat; in the first, every final play is
    left to the timer."""
    tally = Tally()
    # No outcome lines: nothing here reads them (test_logs does), and pytest would hold
    # thousands of them for the report.
    with Stack(store="memory", sockets=False, log_level="WARNING") as stack:
        c = stack.container(seed=seeds[0] if seeds else 0)
        for seed in seeds:
            wait_out = seed == seeds[0]
            table = Table(
                stack, c, GROUP - seed, people(2 + seed % 7), seed, wait_out_final_plays=wait_out
            )
            table.check_the_end(table.play())
            tally.add(table.tally)
    return tally


@pytest.mark.slow
@pytest.mark.parametrize("share", range(STACK_SHARES), ids=lambda k: f"seeds{k}mod{STACK_SHARES}")
def test_whole_games_through_the_webhook_handler_keep_the_invariants(share: int) -> None:
    seeds = list(range(STACK_GAMES))[share::STACK_SHARES]
    tally = play_through_the_bot(seeds)
    assert tally.games == len(seeds)
    assert set(tally.players) == {2 + seed % 7 for seed in seeds}
    # Every kind of press was made, and the timer let final plays stand.
    if len(seeds) >= 10:
        assert set(tally.players) == set(range(2, 9))
        assert min(tally.moves[k] for k in ("Play", "Shout", "LetItStand")) > 0
    if seeds:
        assert tally.timeouts > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "share", range(STALLING_SHARES), ids=lambda k: f"seeds{k}mod{STALLING_SHARES}"
)
def test_r20_games_in_which_people_stop_answering_all_end_and_nobody_is_waited_for_long(
    share: int,
) -> None:
    seeds = list(range(STALLING_GAMES))[share::STALLING_SHARES]
    ending = play_stalling_games(seeds)
    assert ending.games == len(seeds)
    # Every game ends: with a winner, or stopped for want of people; never otherwise.
    assert ending.won + ending.no_person == ending.games and ending.other_stops == 0
    waits = ending.waits
    # Nobody to play waits past their clock by more than 2 s (the SQS message set when the
    # reminder went, up to a second late, then up to a second late itself); a decider, past
    # the 45 seconds of R14 by more than 2 s.
    assert max(waits.beyond_clock) <= 2.0
    assert max(waits.after_deadline, default=0.0) <= 2.0
    assert max(waits.decisions, default=0.0) <= DECISION_SECONDS + 2.0
    if seeds:
        assert ending.no_person >= 1, "the first game ends for want of people"
        assert ending.table_plays > 0 and ending.clock_forfeits > 0


def play_engine_games(seeds: list[int]) -> int:
    for seed in seeds:
        game, history = play_out(2 + seed % 7, seed)  # checks I1-I4 after every move
        won = [e for e in history if isinstance(e, ev.Won)]
        assert game.winner is not None, seed
        assert len(won) == 1 and won[0].winner == game.ids[game.winner], seed
        assert won[0].ranking == game.ranking() == expected_ranking(game), seed
    return len(seeds)


@pytest.mark.slow
@pytest.mark.parametrize("share", range(ENGINE_SHARES), ids=lambda k: f"seeds{k}mod{ENGINE_SHARES}")
def test_engine_games_keep_the_invariants_and_end_with_one_winner(share: int) -> None:
    seeds = list(range(ENGINE_GAMES))[share::ENGINE_SHARES]
    assert play_engine_games(seeds) == len(seeds)
