"""The screens of a game in a player's language: pure functions from engine state to `Screen`s.

The group sees the view of nobody (`view(game, None, now)`): counts, bullets and calls, never a
card. The only cards a group message ever shows are a challenge's turned-over cards (R11),
which the table is meant to see. A private hand shows its owner's cards and nobody else's.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace

from engine import (
    BULLETS,
    CLOCK_CHOICES,
    MAX_PLAY,
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
from handlers import names, robots
from handlers.callbacks import NO_RANK, Kind, Place, Press, encode, toggles
from handlers.screens import Button, Keyboard, Screen, time_of_day, timed
from handlers.text import block, isolate, t, tn

ROW = 6  # card buttons per row: 51 cards (the most a hand can hold) take 9 rows
REFUSAL_LENGTH = 200  # Telegram's limit for a callback answer

# Refusals that name someone: the engine's `error.player`, or who the table waits for.
_NAMED = frozenset(
    {Code.NOT_YOUR_TURN, Code.ALREADY_CHALLENGED, Code.NOT_DECIDER, Code.FINAL_PLAY_PENDING}
)


def shown_names(game: Game) -> dict[int, str]:
    """Each seated player's name as every screen shows it (`handlers.names.labels`)."""
    return dict(zip(game.ids, names.labels(game.ids, game.names), strict=True))


def name_of(game: Game, player: int | None, lang: str) -> str:
    shown = shown_names(game).get(player) if player is not None else None
    return shown if shown is not None else t(lang, "someone")


def seconds_left(deadline: float | None, now: float) -> int:
    return max(0, round(deadline - now)) if deadline is not None else 0


def _dots(bullets: int) -> str:
    return "●" * bullets + "○" * (BULLETS - bullets)


# --- the table: one group message, edited in place -------------------------------------------


def table(
    game: Game,
    place: Place,
    lang: str,
    now: float,
    note: str | None = None,
    *,
    not_back: Sequence[str] = (),
) -> Screen:
    """The group's table: the lobby, the running game (UI.md), or the end and its ranking; its
    buttons lead to the game at `place`. A lobby names the people of the last game who have
    not come back yet (`not_back`)."""
    v = view(game, None, now)
    if v.phase is Phase.LOBBY:
        return _lobby(game, v, place, lang, note, not_back=not_back)
    if v.phase is Phase.OVER:
        return _over(game, v, lang, note)
    title = (
        tn(lang, "title_running_clock", len(v.seats), seconds=v.clock)
        if v.clock
        else tn(lang, "title_running", len(v.seats))
    )
    lines = [title, tn(lang, "status", v.pile, rank=RANKS[v.rank])]
    if v.last is not None:
        name = name_of(game, v.last.player, lang)
        lines.append(t(lang, "call_by", n=v.last.count, rank=RANKS[v.last.rank], name=name))
    lines.append("")
    shown = shown_names(game)
    # R20: the awaited person's clock, as the moment it runs out: a time, not a countdown, so
    # the table is not edited every second.
    clocked = v.awaited if v.phase is Phase.PLAY and v.deadline is not None else None
    for seat in v.seats:
        mark = t(lang, "mark_turn" if seat.player == v.awaited else "mark_wait")
        name = shown[seat.player]
        if seat.out:
            lines.append(t(lang, "seat_out", mark=mark, name=name))
        elif seat.player == clocked and v.deadline is not None:
            dots, by = _dots(seat.bullets), time_of_day(v.deadline)
            lines.append(
                tn(lang, "seat_clock", seat.cards, mark=mark, name=name, dots=dots, time=by)
            )
        else:
            dots = _dots(seat.bullets)
            lines.append(tn(lang, "seat", seat.cards, mark=mark, name=name, dots=dots))
    final = v.last if v.phase is Phase.DECIDE else None  # R13: a final play awaits its decision
    if note or final:
        lines.append("")
    if note:
        lines.append(note)
    if final is not None:
        player, decider = name_of(game, final.player, lang), name_of(game, v.awaited, lang)
        seconds = seconds_left(v.deadline, now)
        lines.append(tn(lang, "decide_line", seconds, player=player, decider=decider))
    buttons: list[Button] = []
    if v.shout_open:
        buttons.append(Button(t(lang, "btn_liar"), place.data(Kind.SHOUT, v.plays)))
    if final is not None and (v.deadline is None or now < v.deadline):
        buttons.append(Button(t(lang, "btn_stand"), place.data(Kind.STAND, v.plays)))
    rows = [tuple(buttons)] if buttons else []
    if v.votes_needed > 0:
        # On a row of its own, under the moves: a vote, not a thing to press in a hurry.
        label = t(lang, "btn_end", votes=v.votes, needed=v.votes_needed)
        if not v.votes:
            label = t(lang, "btn_end_unvoted")
        rows.append((Button(label, place.data(Kind.VOTE)),))
    return timed(block(lang, lines), tuple(rows))


def _lobby(
    game: Game, v: View, place: Place, lang: str, note: str | None, *, not_back: Sequence[str]
) -> Screen:
    """Who sits at the table; Join, Leave, and Start once it can start; a button per computer
    player to take it off (its press is checked: the opener or an admin)."""
    lines = [t(lang, "title_lobby"), t(lang, "lobby_limits"), clock_line(v.clock, lang), ""]
    shown = shown_names(game)
    if v.seats:
        lines.append(tn(lang, "lobby_players", len(v.seats)))
        lines += [
            t(lang, "lobby_seat", pos=i, name=shown[s.player])
            if s.player > 0
            else t(lang, "lobby_robot", pos=i, name=shown[s.player], level=_level(s.player, lang))
            for i, s in enumerate(v.seats, 1)
        ]
    else:
        lines.append(t(lang, "lobby_empty"))
    if not_back:
        # Each name isolated on its own (a placeholder would isolate the list as one): a list
        # may mix scripts.
        listed = t(lang, "list_separator").join(isolate(name) for name in not_back)
        lines.append(f"{t(lang, 'lobby_not_back')} {listed}")
    if note:
        lines += ["", note]
    buttons = [
        Button(t(lang, "btn_join"), place.data(Kind.JOIN)),
        Button(t(lang, "btn_leave"), place.data(Kind.LEAVE)),
    ]
    people = [s for s in v.seats if s.player > 0]  # computer players alone cannot start
    if MIN_PLAYERS <= len(v.seats) <= MAX_PLAYERS and people:
        buttons.append(Button(t(lang, "btn_start"), place.data(Kind.START)))
    removals = [
        Button(t(lang, "btn_remove", name=shown[s.player]), place.data(Kind.REMOVE, -s.player))
        for s in v.seats
        if s.player < 0
    ]
    rows = [tuple(buttons), *(tuple(removals[i : i + 2]) for i in range(0, len(removals), 2))]
    return Screen(block(lang, lines), tuple(rows))


def _level(player: int, lang: str) -> str:
    """A computer player's level, in words (`robots`)."""
    return t(lang, f"level_{robots.level_of(player)}")


def clock_line(seconds: int, lang: str) -> str:
    """R20's setting in one line, with the command that changes it."""
    return t(lang, "lobby_clock", seconds=seconds) if seconds else t(lang, "lobby_clock_off")


def _over(game: Game, v: View, lang: str, note: str | None) -> Screen:
    if v.winner is None:
        lines = [t(lang, "title_stopped")]
    else:
        lines = [t(lang, "title_over"), t(lang, "winner", name=name_of(game, v.winner, lang))]
        lines += ["", *ranking_lines(game, v, v.ranking, lang)]
    if note:
        lines += ["", note]
    return Screen(block(lang, lines))


def ranking_lines(game: Game, v: View, ranking: Sequence[int], lang: str) -> list[str]:
    """R15: the Final ranking with the cards each player has left; forfeits say so (R19)."""
    lines = [t(lang, "final_ranking")]
    shown = shown_names(game)
    for pos, player in enumerate(ranking, 1):
        seat = v.seat(player)
        if seat is None:
            continue
        if seat.out:
            lines.append(t(lang, "ranking_row_out", pos=pos, name=shown[player]))
        else:
            lines.append(tn(lang, "ranking_row", seat.cards, pos=pos, name=shown[player]))
    return lines


def rules(lang: str, seconds: int | None) -> str:
    """/rules: the rules in short, saying the turn clock (R20) of the table they are asked at:
    `seconds`, 0 for none; None in a private chat, where there is no table."""
    if seconds is None:
        clock = t(lang, "rules_clock_any")
    elif seconds:
        clock = t(lang, "rules_clock", seconds=seconds)
    else:
        clock = t(lang, "rules_clock_off")
    return block(lang, [t(lang, "rules"), clock, t(lang, "rules_end")])


# --- the settings: R20's turn clock ------------------------------------------------------------


def settings(seconds: int, game: Game | None, place: Place, lang: str) -> Screen:
    """/settings: the turn clock of the chat's games (the running or open game's own, else the
    chat's `seconds`), and a button per choice, the current one ticked, unless a game is
    running. Anyone may look; a press is checked (the opener or an admin)."""
    if game is not None and game.phase is not Phase.OVER:
        seconds = game.clock
    about = t(lang, "settings_clock", seconds=seconds) if seconds else t(lang, "settings_clock_off")
    running = game is not None and game.phase in (Phase.PLAY, Phase.DECIDE)
    lines = [t(lang, "settings_title"), about, ""]
    if running:
        return Screen(block(lang, [*lines, t(lang, "clock_running")]))
    buttons = tuple(
        Button(
            ("✓ " if choice == seconds else "")
            + (t(lang, "btn_clock", seconds=choice) if choice else t(lang, "btn_clock_off")),
            place.data(Kind.CLOCK, choice),
        )
        for choice in CLOCK_CHOICES
    )
    return Screen(block(lang, [*lines, t(lang, "settings_choose")]), (buttons,))


# --- the private hand: one message per player, edited in place -------------------------------


def hand(
    game: Game,
    player: int,
    place: Place,
    lang: str,
    now: float,
    *,
    selection: int = 0,
    table_lang: str | None = None,
) -> Screen:
    """`player`'s own hand, in their `lang`: their cards as toggle buttons, Play and Liar! when
    they may. A hint that names a button of the group's table quotes it as the table shows it,
    in the group's `table_lang`."""
    v = view(game, player, now)
    me = v.seat(player)
    if me is None:
        return Screen(block(lang, [t(lang, "hand_not_seated")]))
    if v.phase is Phase.LOBBY:
        return Screen(block(lang, [t(lang, "hand_lobby")]))
    if me.out:
        # Told how the game ended too: the end edits every person's hand.
        end = [_hand_end(game, v, lang)] if v.phase is Phase.OVER else []
        return Screen(block(lang, [t(lang, "hand_out"), *end]))
    lines = [tn(lang, "hand_title", count(v.hand))]
    if v.phase is Phase.OVER:
        return Screen(block(lang, [*lines, _hand_end(game, v, lang)]))
    lines += _hand_status(game, v, player, lang, now, table_lang=table_lang or lang)
    rank = v.rank if v.can_play else NO_RANK
    shout = v.can_play and v.can_shout
    # A toggle names the turn, for the Play it draws, and the play Liar! targets (R10).
    toggle = place.press(
        Kind.TOGGLE, v.turns, hand=v.hand, rank=rank, shout=shout, play=v.plays if shout else 0
    )
    return timed(block(lang, lines), _hand_keyboard(toggle, selection, lang))


def _hand_end(game: Game, v: View, lang: str) -> str:
    """How the game ended, in a hand: the winner, or no winner, and why when no person was
    left in it (R20: only that stop leaves nobody but computer players)."""
    if v.winner is not None:
        return t(lang, "hand_over_won", name=name_of(game, v.winner, lang))
    if not any(s.player > 0 and not s.out for s in v.seats):
        return t(lang, "stopped_no_person")
    return t(lang, "hand_over_stopped")


def _hand_status(
    game: Game, v: View, player: int, lang: str, now: float, *, table_lang: str
) -> list[str]:
    last = v.last
    liar, stand = t(table_lang, "btn_liar"), t(table_lang, "btn_stand")
    if v.phase is Phase.DECIDE and last is not None:
        final_player, decider = name_of(game, last.player, lang), name_of(game, v.awaited, lang)
        if last.player == player:
            return [t(lang, "hand_final_mine", decider=decider)]
        if v.awaited == player:
            seconds = seconds_left(v.deadline, now)
            return [tn(lang, "hand_decide", seconds, player=final_player, liar=liar, stand=stand)]
    if not v.can_play:
        # The same words whoever plays: a move edits only the hands it changes (the mover's,
        # the next player's), not every player's, which keeps within Telegram's limits.
        return [t(lang, "hand_wait", liar=liar)]
    lines = [t(lang, "hand_your_turn", rank=RANKS[v.rank])]
    me = v.seat(player)
    if v.deadline is not None and me is not None:  # R20: the clock of the person to play
        key = "hand_play_by_last" if me.ran_out else "hand_play_by"
        lines.append(t(lang, key, time=time_of_day(v.deadline)))
    if v.can_shout and last is not None:
        name = name_of(game, last.player, lang)
        lines.append(t(lang, "hand_can_shout", name=name, n=last.count, rank=RANKS[last.rank]))
    return [*lines, t(lang, "hand_pick")]


def hand_buttons(press: Press, lang: str) -> Keyboard:
    """The hand's keyboard redrawn from a card toggle alone (`press`), without reading the
    game."""
    return _hand_keyboard(press, press.cards, lang)


# A move draws the hands it touches as they were and as they are, to edit only those that
# differ: an idle hand's keyboard is the same on both sides, and from one move to the next.
@functools.lru_cache(maxsize=256)
def _hand_keyboard(toggle: Press, selection: int, lang: str) -> Keyboard:
    """`toggle.hand`'s cards as toggles in rank order, rows of `ROW`, with `selection` ticked;
    Play N × RANK, for turn `toggle.number`, when `toggle.rank` is set and 1-4 are selected;
    Liar! at play `toggle.play` when `toggle.shout`. Each toggle carries all of this for the
    next redraw."""
    held, rank, number = toggle.hand, toggle.rank, toggle.number
    selection &= held
    place = Place(toggle.chat, toggle.game, toggle.topic)
    # Off turn, a toggle needs no turn count: leaving it out keeps an idle hand's buttons, and so
    # its message, unchanged by other players' moves.
    # Every toggle's data differs only in the selection it sets: spell the rest once (the
    # hand is redrawn for each move, up to 51 cards at a time).
    spell = toggles(replace(toggle, number=number if rank != NO_RANK else 0))
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
        actions.append(Button(label, encode(place.press(Kind.PLAY, number, cards=selection))))
    if toggle.shout:
        actions.append(Button(t(lang, "btn_liar"), place.data(Kind.SHOUT, toggle.play)))
    if actions:
        rows.append(tuple(actions))
    return tuple(rows)


# --- refusals: the answer to a refused button, <= 200 characters ------------------------------


def refusal(error: MenteurError, game: Game | None, lang: str) -> str:
    """Why a move was refused, naming who it is about when the engine says (or, for a pending
    final play, the decider)."""
    key = f"refusal_{error.code.value}"
    who = error.player
    if who is None and error.code is Code.FINAL_PLAY_PENDING and game is not None:
        who = game.awaited
    if error.code in _NAMED and who is not None and game is not None and who in game.ids:
        named = t(lang, key + "_named", name=name_of(game, who, lang))
        # Counted as Telegram counts, in UTF-16 units: an emoji is two.
        if len(named.encode("utf-16-le")) // 2 <= REFUSAL_LENGTH:
            return named
    return t(lang, key)
