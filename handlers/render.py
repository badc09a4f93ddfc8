"""The screens of a game in a player's language: pure functions from engine state to `Screen`s.

The group sees the view of nobody (`view(game, None, now)`): counts, bullets and calls, never a
card. The only cards a group message ever shows are a challenge's turned-over cards (R11),
which the table is meant to see. A private hand shows its owner's cards and nobody else's.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine import (
    BULLETS,
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
from engine.game import MAX_PLAY
from handlers import names
from handlers.callbacks import NO_RANK, Kind, Press, encode, toggles
from handlers.screens import Button, Keyboard, Screen
from handlers.text import block, t, tn

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


def press_data(
    kind: Kind, chat: int, game_id: int, number: int = 0, topic: int | None = None
) -> str:
    return encode(Press(kind, chat, game_id, number, topic=topic))


# --- the table: one group message, edited in place -------------------------------------------


def table(  # noqa: PLR0917 - the bot's one call shape for every screen
    game: Game,
    chat: int,
    game_id: int,
    lang: str,
    now: float,
    note: str | None = None,
    *,
    topic: int | None = None,
) -> Screen:
    """The group's table: the lobby, the running game (UI.md), or the end and its ranking.
    `topic`: the forum topic the game is played in, which its buttons name."""
    v = view(game, None, now)
    if v.phase is Phase.LOBBY:
        return _lobby(game, v, chat, game_id, lang, note, topic)
    if v.phase is Phase.OVER:
        return _over(game, v, lang, note)
    lines = [
        tn(lang, "title_running", len(v.seats)),
        tn(lang, "status", v.pile, rank=RANKS[v.rank]),
    ]
    if v.last is not None:
        name = name_of(game, v.last.player, lang)
        lines.append(t(lang, "call_by", n=v.last.count, rank=RANKS[v.last.rank], name=name))
    lines.append("")
    shown = shown_names(game)
    for seat in v.seats:
        mark = t(lang, "mark_turn" if seat.player == v.awaited else "mark_wait")
        name = shown[seat.player]
        if seat.out:
            lines.append(t(lang, "seat_out", mark=mark, name=name))
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
        data = press_data(Kind.SHOUT, chat, game_id, v.plays, topic)
        buttons.append(Button(t(lang, "btn_liar"), data))
    if final is not None and (v.deadline is None or now < v.deadline):
        data = press_data(Kind.STAND, chat, game_id, v.plays, topic)
        buttons.append(Button(t(lang, "btn_stand"), data))
    return Screen(block(lang, lines), (tuple(buttons),) if buttons else ())


def _lobby(  # noqa: PLR0917 - the table's own arguments
    game: Game, v: View, chat: int, game_id: int, lang: str, note: str | None, topic: int | None
) -> Screen:
    """Who sits at the table; Join, Leave, and Start once it can start; a button per computer
    player to take it off (its press is checked: the opener or an admin)."""
    lines = [t(lang, "title_lobby"), t(lang, "lobby_limits"), ""]
    shown = shown_names(game)
    if v.seats:
        lines.append(tn(lang, "lobby_players", len(v.seats)))
        lines += [
            t(lang, "lobby_seat", pos=i, name=shown[s.player]) for i, s in enumerate(v.seats, 1)
        ]
    else:
        lines.append(t(lang, "lobby_empty"))
    if note:
        lines += ["", note]
    buttons = [
        Button(t(lang, "btn_join"), press_data(Kind.JOIN, chat, game_id, topic=topic)),
        Button(t(lang, "btn_leave"), press_data(Kind.LEAVE, chat, game_id, topic=topic)),
    ]
    people = [s for s in v.seats if s.player > 0]  # computer players alone cannot start
    if MIN_PLAYERS <= len(v.seats) <= MAX_PLAYERS and people:
        start = press_data(Kind.START, chat, game_id, topic=topic)
        buttons.append(Button(t(lang, "btn_start"), start))
    removals = [
        Button(
            t(lang, "btn_remove", name=shown[s.player]),
            press_data(Kind.REMOVE, chat, game_id, -s.player, topic),
        )
        for s in v.seats
        if s.player < 0
    ]
    rows = [tuple(buttons), *(tuple(removals[i : i + 2]) for i in range(0, len(removals), 2))]
    return Screen(block(lang, lines), tuple(rows))


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


# --- the private hand: one message per player, edited in place -------------------------------


def hand(  # noqa: PLR0917 - the bot's one call shape for every screen
    game: Game,
    player: int,
    chat: int,
    game_id: int,
    lang: str,
    now: float,
    selection: int = 0,
    *,
    topic: int | None = None,
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
            lines.append(t(lang, "hand_over_won", name=name_of(game, v.winner, lang)))
        return Screen(block(lang, lines))
    lines += _hand_status(game, v, player, lang, now)
    keyboard = _hand_keyboard(
        lang,
        chat,
        game_id,
        number=v.moment,
        play=v.plays,
        held=v.hand,
        selection=selection,
        rank=v.rank if v.can_play else NO_RANK,
        shout=v.can_play and v.can_shout,
        topic=topic,
    )
    return Screen(block(lang, lines), keyboard)


def _hand_status(game: Game, v: View, player: int, lang: str, now: float) -> list[str]:
    last = v.last
    if v.phase is Phase.DECIDE and last is not None:
        final_player, decider = name_of(game, last.player, lang), name_of(game, v.awaited, lang)
        if last.player == player:
            return [t(lang, "hand_final_mine", decider=decider)]
        if v.awaited == player:
            seconds = seconds_left(v.deadline, now)
            return [tn(lang, "hand_decide", seconds, player=final_player)]
    if not v.can_play:
        # The same words whoever plays: a move edits only the hands it changes (the mover's,
        # the next player's), not every player's, which keeps within Telegram's limits.
        return [t(lang, "hand_wait")]
    lines = [t(lang, "hand_your_turn", rank=RANKS[v.rank])]
    if v.can_shout and last is not None:
        name = name_of(game, last.player, lang)
        lines.append(t(lang, "hand_can_shout", name=name, n=last.count, rank=RANKS[last.rank]))
    return [*lines, t(lang, "hand_pick")]


def hand_buttons(press: Press, lang: str) -> Keyboard:
    """The hand's keyboard redrawn from a card toggle alone, without reading the game."""
    return _hand_keyboard(
        lang,
        press.chat,
        press.game,
        number=press.number,
        play=press.play,
        held=press.hand,
        selection=press.cards,
        rank=press.rank,
        shout=press.shout,
        topic=press.topic,
    )


def _hand_keyboard(
    lang: str,
    chat: int,
    game_id: int,
    *,
    number: int,
    play: int,
    held: int,
    selection: int,
    rank: int,
    shout: bool,
    topic: int | None = None,
) -> Keyboard:
    """Toggles in rank order, rows of `ROW`; Play N × RANK, for moment `number`, when `rank`
    is set and 1-4 are selected; Liar! at `play` when `shout`. Each toggle carries all of this
    for the next redraw."""
    selection &= held
    # Off turn, a toggle needs no moment: leaving it out keeps an idle hand's buttons, and so
    # its message, unchanged by other players' moves.
    toggle_number = number if rank != NO_RANK else 0
    # Every toggle's data differs only in the selection it sets: spell the rest once (the
    # hand is redrawn for each move, up to 51 cards at a time).
    toggle = Press(
        Kind.TOGGLE,
        chat,
        game_id,
        toggle_number,
        hand=held,
        rank=rank,
        shout=shout,
        topic=topic,
        play=play if shout else 0,
    )
    spell = toggles(toggle)
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
        data = encode(Press(Kind.PLAY, chat, game_id, number, cards=selection, topic=topic))
        actions.append(Button(label, data))
    if shout:
        data = press_data(Kind.SHOUT, chat, game_id, play, topic)
        actions.append(Button(t(lang, "btn_liar"), data))
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
