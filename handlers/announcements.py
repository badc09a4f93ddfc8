"""The announcements of a game in its group: new messages players must notice, and the table's note.

A challenge (its turned-over cards, R11), a final play with its buttons (R13), a decision passed
on (R19) and the end (R14, R15, R18) each get a new group message; the table's note tells the
most telling event of the latest action in one line. Like `handlers.render`, pure functions from
engine state and events to text, in the group's language.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine import DECISION_SECONDS, RANKS, Game, View, card_name, cards_in, count, view
from engine import events as ev
from handlers.callbacks import Kind, Place
from handlers.render import name_of, ranking_lines, seconds_left
from handlers.screens import Button, Keyboard, Screen
from handlers.text import block, t, tn

# --- moments: new group messages for what players must notice --------------------------------


def messages(
    events: Sequence[ev.Event], game: Game, place: Place, lang: str, now: float
) -> list[Screen]:
    """New group messages, in order: a challenge, a final play, a decision passed on, the end.

    A final play's message (and a passed decision's) carries Liar! and Let it stand for that
    play; the bot takes them off once the play is settled. The end carries Play again.
    """
    screens = []
    for i, event in enumerate(events):
        match event:
            case ev.Challenged():
                screens.append(Screen(block(lang, _challenge(event, game, lang))))
            case ev.FinalPlay():
                lines = _final_play(event, events[:i], game, lang, now)
                buttons = _decision_buttons(lang, place, event.play)
                screens.append(Screen(block(lang, lines), buttons))
            case ev.DecisionPassed():
                lines = _decision_passed(event, game, lang, now)
                buttons = _decision_buttons(lang, place, game.plays)
                screens.append(Screen(block(lang, lines), buttons))
            case ev.Won():
                lines = _won(event, events[:i], game, lang, now)
                screens.append(Screen(block(lang, lines), _again_button(lang, place)))
            case ev.Stopped():
                lines = [t(lang, "title_stopped"), _stopped(event, game, lang)]
                v = view(game, None, now)
                lines += _reveal(game, v, [s.player for s in v.stats], lang)
                screens.append(Screen(block(lang, lines), _again_button(lang, place)))
    return screens


def _again_button(lang: str, place: Place) -> Keyboard:
    """The end message's Play again: the next game in the same chat, for the same people."""
    return ((Button(t(lang, "btn_again"), place.data(Kind.AGAIN)),),)


def _challenge(e: ev.Challenged, game: Game, lang: str) -> list[str]:
    """UI.md: who shouted at whom, the turned-over cards of that play only, the verdict, who
    picks up, the bullet, and who plays next on which rank (nobody, when the game ended)."""
    accuser, loser = name_of(game, e.accuser, lang), name_of(game, e.loser, lang)
    player = name_of(game, e.player, lang)
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
            lines.append(t(lang, "plays_next", name=name_of(game, e.next_player, lang), rank=rank))
    return lines


def turn_taken(e: ev.Challenged, game: Game, lang: str, *, decided: bool) -> str:
    """The private line to the person whose turn (to play, or to decide on a final play, when
    `decided`) challenge `e` took before they acted: who shouted at whose play, who plays now."""
    accuser, player = name_of(game, e.accuser, lang), name_of(game, e.player, lang)
    name = name_of(game, e.next_player, lang)
    key = "turn_taken_decide" if decided else "turn_taken"
    return t(lang, key, accuser=accuser, player=player, name=name)


def _decision_buttons(lang: str, place: Place, play: int) -> Keyboard:
    return (
        (
            Button(t(lang, "btn_liar"), place.data(Kind.SHOUT, play)),
            Button(t(lang, "btn_stand"), place.data(Kind.STAND, play)),
        ),
    )


def _called(before: Sequence[ev.Event], play: int) -> ev.Called | None:
    """The call of play number `play`, which comes just before its FinalPlay event."""
    return next((e for e in before if isinstance(e, ev.Called) and e.play == play), None)


def _final_play(
    e: ev.FinalPlay, before: Sequence[ev.Event], game: Game, lang: str, now: float
) -> list[str]:
    player, decider = name_of(game, e.player, lang), name_of(game, e.decider, lang)
    lines = [t(lang, "final_title")]
    called = _called(before, e.play)
    if called is not None:
        lines.append(t(lang, "final_body", player=player, n=called.count, rank=RANKS[called.rank]))
    lines.append(tn(lang, "final_decide", seconds_left(e.deadline, now), decider=decider))
    if _others_may_shout(game, e.player, e.decider):
        lines.append(t(lang, "final_others"))
    return lines


def _others_may_shout(game: Game, player: int, decider: int) -> bool:
    """Whether someone besides the final player and the decider may still shout (R13): still
    in the game with a bullet. In a game of two, or once the others are out of bullets, the
    line would promise a shout nobody can make."""
    return any(
        game.in_game(seat) and game.bullets[seat] > 0
        for seat, someone in enumerate(game.ids)
        if someone not in (player, decider)
    )


def _decision_passed(e: ev.DecisionPassed, game: Game, lang: str, now: float) -> list[str]:
    last = view(game, None, now).last
    decider = name_of(game, e.decider, lang)
    player = name_of(game, last.player if last is not None else None, lang)
    return [
        t(lang, "final_title"),
        t(lang, "decision_passed", decider=decider, player=player),
        tn(lang, "final_decide", seconds_left(e.deadline, now), decider=decider),
    ]


def _how_won(before: Sequence[ev.Event], game: Game, lang: str) -> str | None:
    """Why the game ended with a winner: let stand (by whom, or the clock), a challenge that
    showed the final play true, or everyone else gone (R14, R19)."""
    for e in reversed(before):
        match e:
            case ev.LetStand(by=None):
                return tn(lang, "won_timeout", round(DECISION_SECONDS))
            case ev.LetStand(by=by):
                return t(lang, "won_let_stand", by=name_of(game, by, lang))
            case ev.Challenged():
                return t(lang, "won_challenge")
            case ev.Forfeited():
                return t(lang, "won_last")
    return None


def _won(e: ev.Won, before: Sequence[ev.Event], game: Game, lang: str, now: float) -> list[str]:
    lines = [t(lang, "won_title", name=name_of(game, e.winner, lang))]
    how = _how_won(before, game, lang)
    if how is not None:
        lines.append(how)
    v = view(game, None, now)
    return [
        *lines,
        "",
        *ranking_lines(game, v, e.ranking, lang),
        *_reveal(game, v, e.ranking, lang),
    ]


def _reveal(game: Game, v: View, order: Sequence[int], lang: str) -> list[str]:
    """R16, "How the game went": a line per player of `order` from the game's own counters, and
    the boldest bluff that stood. Only once the game is over (`v.stats`), and nothing of it is
    kept after: no totals across games. Empty for a game begun before the counters were kept,
    or stopped in its lobby."""
    if not v.stats:
        return []
    stats = {s.player: s for s in v.stats}
    lines = ["", t(lang, "reveal_title")]
    for player in order:
        s = stats[player]
        # A number each, worded alone for its plural form (`tn` chooses by one number); in the
        # row, each part is one isolated unit, as any value is.
        lines.append(
            t(
                lang,
                "reveal_row",
                name=name_of(game, player, lang),
                plays=tn(lang, "reveal_plays", s.plays),
                lies=tn(lang, "reveal_lies", s.lies),
                caught=tn(lang, "reveal_caught", s.caught),
                shouts=tn(lang, "reveal_shouts", s.shouts),
                right=tn(lang, "reveal_right", s.right),
                picked=tn(lang, "reveal_picked", s.picked_up),
            )
        )
    bold = v.boldest
    if bold is not None:
        name = name_of(game, bold.player, lang)
        lines.append(t(lang, "reveal_boldest", name=name, n=bold.count, rank=RANKS[bold.rank]))
    return lines


def _stopped(e: ev.Stopped, game: Game, lang: str) -> str:
    if e.by is not None:
        return t(lang, "stopped_by", name=name_of(game, e.by, lang))
    if e.reason is ev.StopReason.NO_PERSON:
        return t(lang, "stopped_no_person")
    if e.reason is ev.StopReason.VOTE:
        return t(lang, "stopped_vote")
    return t(lang, "stopped_idle")


# --- the table's note: one line about the latest events --------------------------------------


def _table_played(before: Sequence[ev.Event], player: int) -> ev.TablePlayed | None:
    """R20: the table's play for `player` whose call comes next, if the events just `before`
    that call end with one."""
    last = before[-1] if before else None
    return last if isinstance(last, ev.TablePlayed) and last.player == player else None


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
    ev.Voted: 1,
    ev.ClockSet: 1,
    # The table's play (R20) is told with its call, which follows it (`_table_played`).
    ev.TablePlayed: 0,
}


def note(
    events: Sequence[ev.Event], game: Game, lang: str, earlier: Game | None = None
) -> str | None:
    """One short line for the table about the most telling event of `events` (see `_WEIGHT`;
    the later of two equals), or None when there are none. `earlier` is the game before the
    events: someone who left the lobby is named as they sat there."""
    if not events:
        return None
    index = max(range(len(events)), key=lambda i: (_WEIGHT[type(events[i])], i))
    event, before = events[index], events[:index]

    def name(player: int | None) -> str:
        if earlier is not None and player is not None and player not in game.ids:
            return name_of(earlier, player, lang)
        return name_of(game, player, lang)

    match event:
        case ev.Joined(player=player):
            return t(lang, "note_joined", name=name(player))
        case ev.Left(player=player):
            return t(lang, "note_left", name=name(player))
        case ev.Started(order=order):
            return t(lang, "note_started", name=name(order[0]), rank=RANKS[0])
        case ev.Called(player=player, count=n, rank=rank):
            by_table = _table_played(before, player)
            if by_table is not None:
                seconds = by_table.seconds
                return t(
                    lang,
                    "note_table_played",
                    name=name(player),
                    seconds=seconds,
                    n=n,
                    rank=RANKS[rank],
                )
            return t(lang, "note_called", name=name(player), n=n, rank=RANKS[rank])
        case ev.FinalPlay(player=player, decider=decider, play=play):
            called = _called(before, play)
            if called is None:
                return t(lang, "note_decision_passed", name=name(decider))
            letter = RANKS[called.rank]
            by_table = _table_played(before[: before.index(called)], player)
            if by_table is not None:
                return t(
                    lang,
                    "note_table_final",
                    name=name(player),
                    seconds=by_table.seconds,
                    n=called.count,
                    rank=letter,
                )
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
        case ev.Forfeited(player=player, clock=clock, by_admin=by_admin):
            key = (
                "note_forfeited_clock" if clock else "note_kicked" if by_admin else "note_forfeited"
            )
            return t(lang, key, name=name(player))
        case ev.ClockSet(seconds=seconds):
            return t(lang, "note_clock", seconds=seconds) if seconds else t(lang, "note_clock_off")
        case ev.TurnPassed(player=player):
            return t(lang, "note_turn_passed", name=name(player))
        case ev.DecisionPassed(decider=decider):
            return t(lang, "note_decision_passed", name=name(decider))
        case ev.Voted(player=player, votes=votes, needed=needed):
            return t(lang, "note_voted", name=name(player), votes=votes, needed=needed)
        case ev.Won():
            return _how_won(before, game, lang) or t(lang, "winner", name=name(event.winner))
        case ev.Stopped():
            return _stopped(event, game, lang)
    return None
