"""The screens of a game in a player's language: pure functions from engine state to `Screen`s.

The group sees the view of nobody (`view(game, None, now)`): counts, bullets and calls, never a
card. The only cards a group message ever shows are a challenge's turned-over cards (R11),
which the table is meant to see. A private hand shows its owner's cards and nobody else's.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine import (
    BULLETS,
    DECISION_SECONDS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    RANKS,
    Code,
    Game,
    MenteurError,
    Phase,
    View,
    card_name,
    cards_in,
    count,
    view,
)
from engine import events as ev
from engine.game import MAX_PLAY
from handlers.callbacks import NO_RANK, Kind, Press, encode, toggles
from handlers.screens import Button, Keyboard, Screen
from handlers.text import block, t, tn

ROW = 6  # card buttons per row: 51 cards (the most a hand can hold) take 9 rows
REFUSAL_LENGTH = 200  # Telegram's limit for a callback answer

# Refusals that name someone: the engine's `error.player`, or who the table waits for.
_NAMED = frozenset(
    {Code.NOT_YOUR_TURN, Code.ALREADY_CHALLENGED, Code.NOT_DECIDER, Code.FINAL_PLAY_PENDING}
)


def _name(game: Game, player: int | None, lang: str) -> str:
    seat = game.seat_of(player) if player is not None else None
    return game.names[seat] if seat is not None else t(lang, "someone")


def _seconds_left(deadline: float | None, now: float) -> int:
    return max(0, round(deadline - now)) if deadline is not None else 0


def _dots(bullets: int) -> str:
    return "●" * bullets + "○" * (BULLETS - bullets)


def _press(kind: Kind, chat: int, game_no: int, number: int = 0) -> str:
    return encode(Press(kind, chat, game_no, number))


# --- the table: one group message, edited in place -------------------------------------------


def table(  # noqa: PLR0917 - the bot's one call shape for every screen
    game: Game, chat: int, game_no: int, lang: str, now: float, note: str | None = None
) -> Screen:
    """The group's table: the lobby, the running game (UI.md), or the end and its ranking."""
    v = view(game, None, now)
    if v.phase is Phase.LOBBY:
        return _lobby(v, chat, game_no, lang, note)
    if v.phase is Phase.OVER:
        return _over(game, v, lang, note)
    lines = [
        tn(lang, "title_running", len(v.seats)),
        tn(lang, "status", v.pile, rank=RANKS[v.rank]),
    ]
    if v.last is not None:
        name = _name(game, v.last.player, lang)
        lines.append(t(lang, "call_by", n=v.last.count, rank=RANKS[v.last.rank], name=name))
    lines.append("")
    for seat in v.seats:
        mark = t(lang, "mark_turn" if seat.player == v.awaited else "mark_wait")
        if seat.out:
            lines.append(t(lang, "seat_out", mark=mark, name=seat.name))
        else:
            dots = _dots(seat.bullets)
            lines.append(tn(lang, "seat", seat.cards, mark=mark, name=seat.name, dots=dots))
    final = v.last if v.phase is Phase.DECIDE else None  # R13: a final play awaits its decision
    if note or final:
        lines.append("")
    if note:
        lines.append(note)
    if final is not None:
        player, decider = _name(game, final.player, lang), _name(game, v.awaited, lang)
        seconds = _seconds_left(v.deadline, now)
        lines.append(tn(lang, "decide_line", seconds, player=player, decider=decider))
    buttons: list[Button] = []
    if v.shout_open:
        buttons.append(Button(t(lang, "btn_liar"), _press(Kind.SHOUT, chat, game_no, v.plays)))
    if final is not None and (v.deadline is None or now < v.deadline):
        buttons.append(Button(t(lang, "btn_stand"), _press(Kind.STAND, chat, game_no, v.plays)))
    return Screen(block(lang, lines), (tuple(buttons),) if buttons else ())


def _lobby(v: View, chat: int, game_no: int, lang: str, note: str | None) -> Screen:
    lines = [t(lang, "title_lobby"), t(lang, "lobby_limits"), ""]
    if v.seats:
        lines.append(tn(lang, "lobby_players", len(v.seats)))
        lines += [t(lang, "lobby_seat", pos=i, name=s.name) for i, s in enumerate(v.seats, 1)]
    else:
        lines.append(t(lang, "lobby_empty"))
    if note:
        lines += ["", note]
    buttons = [
        Button(t(lang, "btn_join"), _press(Kind.JOIN, chat, game_no)),
        Button(t(lang, "btn_leave"), _press(Kind.LEAVE, chat, game_no)),
    ]
    if MIN_PLAYERS <= len(v.seats) <= MAX_PLAYERS:
        buttons.append(Button(t(lang, "btn_start"), _press(Kind.START, chat, game_no)))
    return Screen(block(lang, lines), (tuple(buttons),))


def _over(game: Game, v: View, lang: str, note: str | None) -> Screen:
    if v.winner is None:
        lines = [t(lang, "title_stopped")]
    else:
        lines = [t(lang, "title_over"), t(lang, "winner", name=_name(game, v.winner, lang))]
        lines += ["", *_ranking(v, v.ranking, lang)]
    if note:
        lines += ["", note]
    return Screen(block(lang, lines))


def _ranking(v: View, ranking: Sequence[int], lang: str) -> list[str]:
    """R15: the Final ranking with the cards each player has left; forfeits say so (R19)."""
    lines = [t(lang, "final_ranking")]
    for pos, player in enumerate(ranking, 1):
        seat = v.seat(player)
        if seat is None:
            continue
        if seat.out:
            lines.append(t(lang, "ranking_row_out", pos=pos, name=seat.name))
        else:
            lines.append(tn(lang, "ranking_row", seat.cards, pos=pos, name=seat.name))
    return lines


# --- the private hand: one message per player, edited in place -------------------------------


def hand(  # noqa: PLR0917 - the bot's one call shape for every screen
    game: Game, player: int, chat: int, game_no: int, lang: str, now: float, selection: int = 0
) -> Screen:
    """`player`'s own hand: their cards as toggle buttons, Play and Liar! when they may."""
    v = view(game, player, now)
    me = v.seat(player)
    if me is None:
        return Screen(block(lang, [t(lang, "hand_not_seated")]))
    if v.phase is Phase.LOBBY:
        return Screen(block(lang, [t(lang, "hand_lobby")]))
    if me.out:
        return Screen(block(lang, [t(lang, "hand_out")]))
    lines = [tn(lang, "hand_title", count(v.hand))]
    if v.phase is Phase.OVER:
        if v.winner is None:
            lines.append(t(lang, "hand_over_stopped"))
        else:
            lines.append(t(lang, "hand_over_won", name=_name(game, v.winner, lang)))
        return Screen(block(lang, lines))
    lines += _hand_status(game, v, player, lang, now)
    keyboard = _hand_keyboard(
        lang,
        chat,
        game_no,
        number=v.plays,
        held=v.hand,
        selection=selection,
        rank=v.rank if v.can_play else NO_RANK,
        shout=v.can_play and v.can_shout,
    )
    return Screen(block(lang, lines), keyboard)


def _hand_status(game: Game, v: View, player: int, lang: str, now: float) -> list[str]:
    last = v.last
    if v.phase is Phase.DECIDE and last is not None:
        final_player, decider = _name(game, last.player, lang), _name(game, v.awaited, lang)
        if last.player == player:
            return [t(lang, "hand_final_mine", decider=decider)]
        if v.awaited == player:
            seconds = _seconds_left(v.deadline, now)
            return [tn(lang, "hand_decide", seconds, player=final_player)]
    if not v.can_play:
        # The same words whoever plays: a move edits only the hands it changes (the mover's,
        # the next player's), not every player's, which keeps within Telegram's limits.
        return [t(lang, "hand_wait")]
    lines = [t(lang, "hand_your_turn", rank=RANKS[v.rank])]
    if v.can_shout and last is not None:
        name = _name(game, last.player, lang)
        lines.append(t(lang, "hand_can_shout", name=name, n=last.count, rank=RANKS[last.rank]))
    return [*lines, t(lang, "hand_pick")]


def hand_buttons(press: Press, lang: str) -> Keyboard:
    """The hand's keyboard redrawn from a card toggle alone, without reading the game."""
    return _hand_keyboard(
        lang,
        press.chat,
        press.game,
        number=press.number,
        held=press.hand,
        selection=press.cards,
        rank=press.rank,
        shout=press.shout,
    )


def _hand_keyboard(
    lang: str,
    chat: int,
    game_no: int,
    *,
    number: int,
    held: int,
    selection: int,
    rank: int,
    shout: bool,
) -> Keyboard:
    """Toggles in rank order, rows of `ROW`; Play N × RANK when `rank` is set and 1-4 are
    selected; Liar! when `shout`. Each toggle carries all of this for the next redraw."""
    selection &= held
    # Off turn, a toggle needs no play number: leaving it out keeps an idle hand's buttons, and
    # so its message, unchanged by other players' moves.
    toggle_number = number if rank != NO_RANK else 0
    # Every toggle's data differs only in the selection it sets: spell the rest once (the
    # hand is redrawn for each move, up to 51 cards at a time).
    spell = toggles(
        Press(Kind.TOGGLE, chat, game_no, toggle_number, hand=held, rank=rank, shout=shout)
    )
    buttons = [
        Button(
            ("✓" if selection >> card & 1 else "") + card_name(card), spell(selection ^ 1 << card)
        )
        for card in cards_in(held)
    ]
    rows = [tuple(buttons[i : i + ROW]) for i in range(0, len(buttons), ROW)]
    actions = []
    chosen = count(selection)
    if rank != NO_RANK and 1 <= chosen <= MAX_PLAY:
        label = t(lang, "btn_play", n=chosen, rank=RANKS[rank])
        data = encode(Press(Kind.PLAY, chat, game_no, number, cards=selection))
        actions.append(Button(label, data))
    if shout:
        actions.append(Button(t(lang, "btn_liar"), _press(Kind.SHOUT, chat, game_no, number)))
    if actions:
        rows.append(tuple(actions))
    return tuple(rows)


# --- moments: new group messages for what players must notice --------------------------------


def moments(  # noqa: PLR0917 - the bot's one call shape for every screen
    events: Sequence[ev.Event], game: Game, chat: int, game_no: int, lang: str, now: float
) -> list[Screen]:
    """New group messages, in order: a challenge, a final play, a decision passed on, the end.

    A final play's message (and a passed decision's) carries Liar! and Let it stand for that
    play; the bot takes them off once the play is settled.
    """
    screens = []
    for i, event in enumerate(events):
        match event:
            case ev.Challenged():
                screens.append(Screen(block(lang, _challenge(event, game, lang))))
            case ev.FinalPlay():
                lines = _final_play(event, events[:i], game, lang, now)
                buttons = _decision_buttons(lang, chat, game_no, event.play)
                screens.append(Screen(block(lang, lines), buttons))
            case ev.DecisionPassed():
                lines = _decision_passed(event, game, lang, now)
                buttons = _decision_buttons(lang, chat, game_no, game.plays)
                screens.append(Screen(block(lang, lines), buttons))
            case ev.Won():
                screens.append(Screen(block(lang, _won(event, events[:i], game, lang, now))))
            case ev.Stopped():
                lines = [t(lang, "title_stopped"), _stopped(event, game, lang)]
                screens.append(Screen(block(lang, lines)))
    return screens


def _challenge(e: ev.Challenged, game: Game, lang: str) -> list[str]:
    """UI.md: who shouted at whom, the turned-over cards of that play only, the verdict, who
    picks up, the bullet, and who plays next on which rank (nobody, when the game ended)."""
    accuser, loser = _name(game, e.accuser, lang), _name(game, e.loser, lang)
    player = _name(game, e.player, lang)
    rank = RANKS[e.rank]
    shown = " ".join(card_name(c) for c in cards_in(e.cards))
    verdict = ("verdict_lie" if e.lie else "verdict_truth") + ("_aside" if e.set_aside else "")
    lines = [
        t(lang, "challenge_title"),
        t(lang, "challenge_shout", accuser=accuser, player=player, n=count(e.cards), rank=rank),
        t(lang, "turned_over", cards=shown),
        tn(lang, verdict, e.picked_up, loser=loser),
    ]
    if e.lie and e.next_player == e.accuser:
        lines.append(t(lang, "bullet_back_next", accuser=accuser, rank=rank))
    else:
        lines.append(t(lang, "bullet_back" if e.lie else "bullet_lost", accuser=accuser))
        if e.next_player is not None:
            lines.append(t(lang, "plays_next", name=_name(game, e.next_player, lang), rank=rank))
    return lines


def _decision_buttons(lang: str, chat: int, game_no: int, play: int) -> Keyboard:
    return (
        (
            Button(t(lang, "btn_liar"), _press(Kind.SHOUT, chat, game_no, play)),
            Button(t(lang, "btn_stand"), _press(Kind.STAND, chat, game_no, play)),
        ),
    )


def _called(before: Sequence[ev.Event], play: int) -> ev.Called | None:
    """The call of play number `play`, which comes just before its FinalPlay event."""
    return next((e for e in before if isinstance(e, ev.Called) and e.play == play), None)


def _final_play(
    e: ev.FinalPlay, before: Sequence[ev.Event], game: Game, lang: str, now: float
) -> list[str]:
    player, decider = _name(game, e.player, lang), _name(game, e.decider, lang)
    lines = [t(lang, "final_title")]
    called = _called(before, e.play)
    if called is not None:
        lines.append(t(lang, "final_body", player=player, n=called.count, rank=RANKS[called.rank]))
    lines += [
        tn(lang, "final_decide", _seconds_left(e.deadline, now), decider=decider),
        t(lang, "final_others"),
    ]
    return lines


def _decision_passed(e: ev.DecisionPassed, game: Game, lang: str, now: float) -> list[str]:
    last = view(game, None, now).last
    decider = _name(game, e.decider, lang)
    player = _name(game, last.player if last is not None else None, lang)
    return [
        t(lang, "final_title"),
        t(lang, "decision_passed", decider=decider, player=player),
        tn(lang, "final_decide", _seconds_left(e.deadline, now), decider=decider),
    ]


def _how_won(before: Sequence[ev.Event], game: Game, lang: str) -> str | None:
    """Why the game ended with a winner: let stand (by whom, or the clock), a challenge that
    showed the final play true, or everyone else gone (R14, R19)."""
    for e in reversed(before):
        match e:
            case ev.LetStand(by=None):
                return tn(lang, "won_timeout", round(DECISION_SECONDS))
            case ev.LetStand(by=by):
                return t(lang, "won_let_stand", by=_name(game, by, lang))
            case ev.Challenged():
                return t(lang, "won_challenge")
            case ev.Forfeited():
                return t(lang, "won_last")
    return None


def _won(e: ev.Won, before: Sequence[ev.Event], game: Game, lang: str, now: float) -> list[str]:
    lines = [t(lang, "won_title", name=_name(game, e.winner, lang))]
    how = _how_won(before, game, lang)
    if how is not None:
        lines.append(how)
    return [*lines, "", *_ranking(view(game, None, now), e.ranking, lang)]


def _stopped(e: ev.Stopped, game: Game, lang: str) -> str:
    if e.by is None:
        return t(lang, "stopped_idle")
    return t(lang, "stopped_by", name=_name(game, e.by, lang))


# --- the table's note: one line about the latest events --------------------------------------

# Which event of a batch the note tells: the end, then a challenge, a final play, and so on.
_WEIGHT: dict[type, int] = {
    ev.Won: 9,
    ev.Stopped: 9,
    ev.Challenged: 8,
    ev.FinalPlay: 7,
    ev.LetStand: 6,
    ev.Forfeited: 5,
    ev.DecisionPassed: 4,
    ev.Called: 3,
    ev.TurnPassed: 2,
    ev.Started: 2,
    ev.Joined: 1,
    ev.Left: 1,
}


def note(events: Sequence[ev.Event], game: Game, lang: str) -> str | None:
    """One short line for the table about the most telling event of `events` (see `_WEIGHT`;
    the later of two equals), or None when there are none."""
    if not events:
        return None
    index = max(range(len(events)), key=lambda i: (_WEIGHT[type(events[i])], i))
    event, before = events[index], events[:index]

    def name(player: int | None) -> str:
        return _name(game, player, lang)

    match event:
        case ev.Joined(name=joined):
            return t(lang, "note_joined", name=joined)
        case ev.Left(player=player):
            return t(lang, "note_left", name=name(player))
        case ev.Started(order=order):
            return t(lang, "note_started", name=name(order[0]), rank=RANKS[0])
        case ev.Called(player=player, count=n, rank=rank):
            return t(lang, "note_called", name=name(player), n=n, rank=RANKS[rank])
        case ev.FinalPlay(player=player, decider=decider, play=play):
            called = _called(before, play)
            if called is None:
                return t(lang, "note_decision_passed", name=name(decider))
            letter = RANKS[called.rank]
            return t(lang, "note_final", player=name(player), n=called.count, rank=letter)
        case ev.Challenged():
            verdict = "aside" if event.set_aside else "lie" if event.lie else "truth"
            accuser, loser = name(event.accuser), name(event.loser)
            return tn(
                lang, f"note_challenge_{verdict}", event.picked_up, accuser=accuser, loser=loser
            )
        case ev.LetStand(by=None):
            return tn(lang, "won_timeout", round(DECISION_SECONDS))
        case ev.LetStand(by=by):
            return t(lang, "note_let_stand", by=name(by))
        case ev.Forfeited(player=player):
            return t(lang, "note_forfeited", name=name(player))
        case ev.TurnPassed(player=player):
            return t(lang, "note_turn_passed", name=name(player))
        case ev.DecisionPassed(decider=decider):
            return t(lang, "note_decision_passed", name=name(decider))
        case ev.Won():
            return _how_won(before, game, lang) or t(lang, "winner", name=name(event.winner))
        case ev.Stopped():
            return _stopped(event, game, lang)
    return None


# --- refusals: the answer to a refused button, <= 200 characters ------------------------------


def refusal(error: MenteurError, game: Game | None, lang: str) -> str:
    """Why a move was refused, naming who it is about when the engine says (or, for a pending
    final play, the decider)."""
    key = f"refusal_{error.code.value}"
    who = error.player
    if who is None and error.code is Code.FINAL_PLAY_PENDING and game is not None:
        who = game.awaited
    if error.code in _NAMED and who is not None and game is not None:
        seat = game.seat_of(who)
        if seat is not None:
            named = t(lang, key + "_named", name=game.names[seat])
            if len(named) <= REFUSAL_LENGTH:
                return named
    return t(lang, key)
