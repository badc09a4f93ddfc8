"""Which screens a decision owes, as requests to Telegram: pure functions of the record.

After a write, the group's table is edited (or sent, the first time or after /table), the
moments players must notice get new group messages within Telegram's flood limit, and only the
private hands the move changed are edited. Sending them is `handlers.telegram_io`'s work.
"""

from __future__ import annotations

from dataclasses import replace

from engine import Game, Phase
from engine import events as ev
from handlers import moments, outbox, render
from handlers.outbox import Parcel
from handlers.outcomes import Decision, Result
from handlers.screens import Edit, EditButtons, Request, Screen, Send
from handlers.store import Record
from handlers.text import t

# A person who pressed a button this long ago is still looking at the bot: no turn ping.
LOOKING_SECONDS = 5.0
GROUP_SENDS_PER_MINUTE = 18  # Telegram allows about 20 messages a minute into one group
# Of the minute, what command replies may not take: the games' own messages always find room.
RESERVED_FOR_GAMES = 6
SEND_WINDOW = 60.0


def plan_sends(
    before: Game | None, record: Record, decision: Decision, parcels: list[Parcel], now: float
) -> tuple[list[tuple[int, Screen]], int]:
    """The new group messages this action sends within Telegram's flood limit, and how many
    that is. Every one counts: the table's first message, the moments (a challenge, a final play,
    the end: `parcels`, by stamp), command replies (/table, /rules, /help, /join, /addbot, a
    language prompt, a refusal). Command replies go first, and never take the minute's last
    `RESERVED_FOR_GAMES` (dropped from `decision.extra`; /table edits the table instead of
    sending it anew); moments are never dropped: those the minute has no room for stay in the
    outbox, sent in order once it has. While Telegram's own wait after a 429 lasts (`hold`),
    nothing new goes in. The budget is the chat's, shared by every topic's game and every
    reply: the times are added to `record.sends`, which the transaction adds to the store."""
    game = record.game
    if decision.silent:
        return [], 0
    if game is not None and decision.events:
        note = moments.note(decision.events, game, record.lang, before)
        if note is not None:
            record.note = note
    first_table = game is not None and record.table_msg is None
    first_table = first_table and (decision.write or decision.table_again)
    again = decision.table_again and record.table_msg is not None
    replies = [r for r in decision.extra if isinstance(r, Send) and r.chat_id == record.chat]
    recent = [s for s in record.sends if now - s < SEND_WINDOW]
    waiting = record.hold is not None and now < record.hold
    room = 0 if waiting else max(0, GROUP_SENDS_PER_MINUTE - len(recent) - first_table)
    told = []
    if game is not None:
        place, lang = record.place, record.lang
        told = [(p.stamp, outbox.screen(p, game, place, lang, now)) for p in parcels[:room]]
    room -= len(told)
    answered = replies[: max(0, room - RESERVED_FOR_GAMES)]
    room -= len(answered)
    if len(answered) < len(replies):
        decision.extra = [
            r for r in decision.extra if not any(r is d for d in replies[len(answered) :])
        ]
    if again and room <= RESERVED_FOR_GAMES:
        decision.table_again = again = False
    count = first_table + len(told) + len(answered) + again
    record.sends = recent + [now] * count
    return told, count


def group_room(record: Record, now: float) -> int:
    """New group messages the minute still allows, by the times written in the record."""
    return max(0, GROUP_SENDS_PER_MINUTE - sum(now - s < SEND_WINDOW for s in record.sends))


def room_at(record: Record, now: float) -> float:
    """When the minute next has room for a group message, and Telegram's wait is over."""
    recent = sorted(s for s in record.sends if now - s < SEND_WINDOW)
    at = now
    if len(recent) >= GROUP_SENDS_PER_MINUTE:
        at = recent[len(recent) - GROUP_SENDS_PER_MINUTE] + SEND_WINDOW
    return max(at, record.hold or at)


def moment_key(stamp: int, screen: Screen, final: bool = True) -> str:
    """How a parcel's message is named when sent: "final" for a final play's, whose buttons go
    once it is settled (an end's Play again is no such button)."""
    return f"{'final' if screen.buttons and final else 'moment'}.{stamp}"


def was_sent(stamp: int, remembered: dict[str, int]) -> bool:
    return f"final.{stamp}" in remembered or f"moment.{stamp}" in remembered


def screens(
    before: Game | None,
    record: Record,
    decision: Decision,
    told: list[tuple[int, Screen]],
    now: float,
    *,
    changed: dict[int, Screen] | None = None,
) -> list[Request]:
    """Every request the decision owes: its extras, the table, the moments, the hands (`changed`:
    the hands the write changed, when `hands_drawn` drew them already). Every message into the
    group goes to the game's forum topic, if it is played in one; none goes there at all once
    the group (or the topic) is closed to the bot."""
    chat, thread = record.chat, record.topic
    requests: list[Request] = [
        replace(r, thread=thread) if isinstance(r, Send) and r.chat_id == chat else r
        for r in decision.extra
    ]
    game = record.game
    duplicate = decision.result is Result.DUPLICATE
    if (
        game is None
        or not decision.redraw
        or not (decision.write or decision.table_again or duplicate)
    ):
        return requests
    requests += clock_notices(record, decision.events)
    if decision.silent:
        requests = [r for r in requests if getattr(r, "chat_id", None) != chat]
        if changed is None:
            changed = changed_hands(before, record, now)
        return requests + hand_requests(record, changed)
    table = render.table(
        game, record.place, record.lang, now, record.note, not_back=record.not_back()
    )
    if record.table_msg is None or decision.table_again:
        requests.append(Send(chat, table, "table", thread))
        if record.table_msg is not None:
            # The old table keeps its buttons unless the new one arrives.
            requests.append(EditButtons(chat, record.table_msg, (), after="table"))
    else:
        requests.append(Edit(chat, record.table_msg, table, "table", thread))
    # A final play's buttons are taken off once it is settled; the end's Play again stays.
    final = game.phase is not Phase.OVER
    requests += [
        Send(chat, screen, moment_key(stamp, screen, final), thread) for stamp, screen in told
    ]
    # The final play is settled: its buttons go. A retried update or a redraw cannot tell
    # whether the first delivery took them off, so it does again ("not modified" is success).
    settled = before is not None and before.phase is Phase.DECIDE
    again = duplicate or decision.all_hands or decision.owed
    if (settled or again) and game.phase is not Phase.DECIDE and record.final_msg is not None:
        requests.append(EditButtons(chat, record.final_msg, ()))
    if game.phase is Phase.LOBBY:
        return requests
    if duplicate or decision.all_hands:
        # Telegram sends an update again only when it got no 200: the first delivery may have
        # committed and then died before sending (a container killed or timed out). The hands
        # its move changed are drawn again (all, when that is no longer known); an unchanged
        # one costs a "message is not modified", which counts as success. So does a redraw.
        players = set(game.ids) if decision.hands is None else decision.hands
        requests += hand_requests(record, hand_screens(record, players, now))
    elif decision.write:
        if changed is None:
            changed = changed_hands(before, record, now)
        requests += hand_requests(record, changed)
    if decision.write:  # every hand drawn or not, whoever's turn the write brought is told
        requests += turn_ping(before, record, now)
    return requests


def turn_ping(before: Game | None, record: Record, now: float) -> list[Request]:
    """A short private line to the person whose turn (to play, or to decide on a final play)
    this write brought: a new message notifies their phone, where the hand's edit does not. The
    hand stays the one message with buttons, edited in place, so a line that fails to arrive
    loses nothing. Once a turn; none to someone who pressed a button in the last
    `LOOKING_SECONDS` (they are looking already), nor when a game starts (the hands are new
    messages then)."""
    game = record.game
    running = (Phase.PLAY, Phase.DECIDE)
    if game is None or before is None or before.phase not in running or game.phase not in running:
        return []
    player = game.awaited
    if player is None or player < 0 or (player, game.phase) == (before.awaited, before.phase):
        return []
    if player in record.unreachable:
        return []
    if now - record.looking.get(player, -LOOKING_SECONDS) < LOOKING_SECONDS:
        return []
    lang = record.lang_of(player)
    if game.phase is Phase.DECIDE and game.last is not None:
        finalist = render.name_of(game, game.ids[game.last.seat], lang)
        text = t(lang, "ping_decide", group=record.title, player=finalist)
    else:
        text = t(lang, "ping_play", group=record.title)
    return [Send(player, Screen(text))]


def looking(record: Record, presser: int, now: float) -> dict[int, float]:
    """Who pressed a button in the last `LOOKING_SECONDS`, with `presser` pressing now."""
    recent = {p: at for p, at in record.looking.items() if now - at < LOOKING_SECONDS}
    return recent | {presser: now}


def clock_notices(record: Record, events: list[ev.Event]) -> list[Request]:
    """R20: whom the clock put out of the game is told why, in private, in their language.

    A private chat takes about one message a second; these come at most once a game each, like
    the reminders (one a turn, a third of a clock of 30 seconds or more apart), so neither
    needs a budget of its own, unlike the group's messages."""
    return [
        Send(e.player, Screen(t(record.lang_of(e.player), "clock_forfeit", group=record.title)))
        for e in events
        if isinstance(e, ev.Forfeited)
        and e.clock
        and e.player > 0
        and e.player not in record.unreachable
    ]


def hands_drawn(
    before: Game | None, record: Record, decision: Decision, now: float
) -> tuple[int, dict[int, Screen] | None]:
    """The seats whose hands `decision`, written, draws (a mask), to keep with its update:
    Telegram's retry of it draws those again and no other, since a hand drawn again loses the
    cards its owner was ticking. With them the changed hands' screens, when it drew them, for
    `screens` to send without drawing them again."""
    game = record.game
    if game is None or game.phase is Phase.LOBBY or not decision.redraw:
        return 0, None
    if decision.all_hands:
        return (1 << len(game.ids)) - 1, None
    if not decision.write:
        return 0, None
    changed = changed_hands(before, record, now)
    return sum(1 << game.ids.index(p) for p in changed), changed


def retried_hands(record: Record, update_id: int | None) -> set[int] | None:
    """The hands a retry of `update_id` draws again: those its write drew, if it is the
    latest update written (None, all of them, when that is not known)."""
    game = record.game
    if record.drawn is None or not record.updates or record.updates[-1] != update_id:
        return None
    if game is None:
        return set()
    return {p for s, p in enumerate(game.ids) if record.drawn >> s & 1}


def changed_hands(before: Game | None, record: Record, now: float) -> dict[int, Screen]:
    """The private hand screens that differ after the move: only those are edited."""
    game = record.game
    assert game is not None
    humans = {p for p in game.ids if p > 0}
    if before is None or before.phase is Phase.LOBBY or game.phase is Phase.OVER:
        return hand_screens(record, humans, now)
    # A hand's screen shows the hand, and whether its owner plays, decides, or made the final
    # play: only those players can see a change, so only they are drawn twice.
    touched = {
        game.ids[s] for s, (a, b) in enumerate(zip(before.hands, game.hands, strict=True)) if a != b
    }
    touched |= {p for p in (before.awaited, game.awaited) if p is not None}
    touched |= {g.ids[g.last.seat] for g in (before, game) if g.last is not None}
    touched |= {game.ids[s] for s in game.out if s not in before.out}
    drawn = hand_screens(record, touched & humans, now)
    for player, screen in list(drawn.items()):
        if hand_screen(record, before, player, now) == screen:
            del drawn[player]
    return drawn


def hand_screens(record: Record, players: set[int], now: float) -> dict[int, Screen]:
    """The hands of `players` (people seated in the record's running game) as they are now."""
    game = record.game
    if game is None or game.phase is Phase.LOBBY:
        return {}
    return {p: hand_screen(record, game, p, now) for p in players if p > 0 and p in game.ids}


def hand_screen(record: Record, game: Game, player: int, now: float) -> Screen:
    """`player`'s hand in `game` of the record, in their language; the table's buttons it
    names are quoted in the group's."""
    return render.hand(
        game, player, record.place, record.lang_of(player), now, table_lang=record.lang
    )


def hand_requests(record: Record, drawn: dict[int, Screen]) -> list[Request]:
    """Each hand screen as an edit of the player's hand message, or a new one if none is
    known; nothing for a player whose private chat refuses the bot."""
    requests: list[Request] = []
    for player, screen in sorted(drawn.items()):
        if player in record.unreachable:
            continue
        key = f"hand:{player}"
        message = record.hand_msgs.get(player)
        requests.append(
            Send(player, screen, key) if message is None else Edit(player, message, screen, key)
        )
    return requests
