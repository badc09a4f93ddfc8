"""Whether a move is allowed (`verify` raises the reason, `allowed` answers yes or no): the
rules' conditions, checked before `engine.game` changes anything. They judge the game as given;
`engine.game.can` asks them of the game as the clock leaves it."""

from __future__ import annotations

from engine.cards import FULL_DECK, count
from engine.errors import Code, IllegalMove, InvalidMove, MenteurError
from engine.moves import (
    Expire,
    Forfeit,
    Join,
    Leave,
    LetItStand,
    Move,
    Play,
    SetClock,
    Shout,
    Start,
    Stop,
    VoteEnd,
)
from engine.state import CLOCK_CHOICES, MAX_NAME, MAX_PLAY, MAX_PLAYERS, MIN_PLAYERS, Game, Phase


def _running_seat(game: Game, player: int) -> int:
    if game.phase is Phase.LOBBY:
        raise IllegalMove(Code.GAME_NOT_RUNNING)
    if game.phase is Phase.OVER:
        raise IllegalMove(Code.GAME_OVER)
    seat = game.seat_of(player)
    if seat is None or not game.in_game(seat):
        raise IllegalMove(Code.NOT_A_PLAYER)
    return seat


def turn_seat(game: Game) -> int:
    assert game.turn is not None, "I4: a running game awaits a seat"
    return game.turn


def _past_deadline(game: Game, now: float) -> bool:
    return game.phase is Phase.DECIDE and game.deadline is not None and now >= game.deadline


def due(game: Game, now: float) -> bool:
    """Whether a deadline has passed: R14's decision, or R20's clock (only PLAY and DECIDE
    have one)."""
    return game.deadline is not None and now >= game.deadline


def _verify_lobby(game: Game) -> None:
    if game.phase is Phase.OVER:
        raise IllegalMove(Code.GAME_OVER)
    if game.phase is not Phase.LOBBY:
        raise IllegalMove(Code.ALREADY_STARTED)


def verify(game: Game, move: Move, now: float) -> None:
    """Raise the `MenteurError` that refuses `move` now, or return if it is allowed.

    It judges the state as given: `apply` and `can` settle it first, so only
    a caller asking about a state the clock has overtaken meets a passed deadline here.
    """
    match move:
        case Join(player, name):
            if not 0 < len(name) <= MAX_NAME:
                raise InvalidMove(Code.BAD_NAME)
            _verify_lobby(game)
            if player in game.ids:
                raise IllegalMove(Code.ALREADY_JOINED)
            if len(game.ids) >= MAX_PLAYERS:
                raise IllegalMove(Code.TABLE_FULL)
        case Leave(player):
            _verify_lobby(game)
            if player not in game.ids:
                raise IllegalMove(Code.NOT_A_PLAYER)
        case Start(player, _):
            _verify_lobby(game)
            if player not in game.ids and player != game.opener:
                raise IllegalMove(Code.NOT_A_PLAYER)
            if not MIN_PLAYERS <= len(game.ids) <= MAX_PLAYERS:
                raise IllegalMove(Code.NOT_ENOUGH_PLAYERS)
            if all(p < 0 for p in game.ids):  # computer players alone: see Join
                raise IllegalMove(Code.NO_PERSON_SEATED)
        case Play(player, cards, turns):
            if cards <= 0 or cards & ~FULL_DECK:
                raise InvalidMove(Code.BAD_CARDS)
            if not 1 <= count(cards) <= MAX_PLAY:
                raise InvalidMove(Code.CARD_COUNT)
            seat = _running_seat(game, player)
            if turns is not None and turns != game.turns:
                raise IllegalMove(Code.STALE)
            if game.phase is Phase.DECIDE:
                # R13: after a final play the next player can no longer play.
                code = (
                    Code.DEADLINE_PASSED if _past_deadline(game, now) else Code.FINAL_PLAY_PENDING
                )
                raise IllegalMove(code)
            if game.turn != seat:
                raise IllegalMove(Code.NOT_YOUR_TURN, game.ids[turn_seat(game)])
            if game.clock and due(game, now):  # R20: the table plays instead
                raise IllegalMove(Code.DEADLINE_PASSED)
            if cards & ~game.hands[seat]:
                raise IllegalMove(Code.CARDS_NOT_IN_HAND)
        case Shout(player, play):
            seat = _running_seat(game, player)
            if game.bullets[seat] == 0:
                raise IllegalMove(Code.NO_BULLETS)
            if _past_deadline(game, now):
                raise IllegalMove(Code.DEADLINE_PASSED)
            if play < game.plays:
                raise IllegalMove(Code.NEXT_PLAYER_PLAYED)
            if play > game.plays:
                raise IllegalMove(Code.STALE)
            if game.last is None:
                if game.shouted is not None:
                    raise IllegalMove(Code.ALREADY_CHALLENGED, game.ids[game.shouted])
                raise IllegalMove(Code.NOTHING_TO_CHALLENGE)
            if game.last.seat == seat:
                raise IllegalMove(Code.OWN_PLAY)
        case LetItStand(player, play):
            seat = _running_seat(game, player)
            if play != game.plays:
                raise IllegalMove(Code.STALE)
            if game.phase is not Phase.DECIDE:
                raise IllegalMove(Code.NO_DECISION_PENDING)
            if game.turn != seat:
                raise IllegalMove(Code.NOT_DECIDER, game.ids[turn_seat(game)])
            if _past_deadline(game, now):
                raise IllegalMove(Code.DEADLINE_PASSED)
        case Stop(player, admin):
            if game.phase is Phase.OVER:
                raise IllegalMove(Code.GAME_OVER)
            if player != game.opener and not admin:
                raise IllegalMove(Code.NOT_ALLOWED)
        case Expire(idle_seconds):
            if game.phase is Phase.OVER:
                raise IllegalMove(Code.GAME_OVER)
            if now - game.acted < idle_seconds:
                raise IllegalMove(Code.NOT_YET_DUE)
        case Forfeit(player):
            _running_seat(game, player)
        case SetClock(player, seconds, admin):
            if seconds not in CLOCK_CHOICES:
                raise InvalidMove(Code.BAD_CLOCK)
            _verify_lobby(game)
            if player != game.opener and not admin:
                raise IllegalMove(Code.NOT_ALLOWED)
        case VoteEnd(player):
            seat = _running_seat(game, player)
            if player < 0:  # a computer player: the vote is the people's
                raise IllegalMove(Code.NOT_ALLOWED)
            if game.votes >> seat & 1:
                raise IllegalMove(Code.ALREADY_VOTED)


def allowed(game: Game, move: Move, now: float) -> bool:
    """Whether `verify` lets `move` through on `game` as given (`engine.game.as_judged`)."""
    try:
        verify(game, move, now)
    except MenteurError:
        return False
    return True
