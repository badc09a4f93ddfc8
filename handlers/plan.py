"""Planning: what one decided action owes, as a value. Pure: it reads the record as decided on
and the decision, and changes neither.

A `Plan` holds the requests to send once the record is written (the group's table edited, or
sent the first time or after /table; the moments players must notice as new group messages
within Telegram's flood limit; only the private hands the move changed), the button's answer,
and what the write must store with it (the table's note, the outbox, the hands drawn, the
group's send times). The transaction (`handlers.service`) copies that into the record it
writes, then sends the requests (`handlers.telegram_io`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field, replace

from telegram import CallbackQuery

from engine import Game, Phase
from engine import events as ev
from handlers import announcements, outbox, render
from handlers.outbox import Parcel
from handlers.outcomes import Decision, Result
from handlers.screens import Answer, Edit, EditButtons, Request, Screen, Send
from handlers.store import Record
from handlers.text import t

# A person who pressed a button this long ago is still looking at the bot: no turn ping.
LOOKING_SECONDS = 5.0
GROUP_SENDS_PER_MINUTE = 18  # Telegram allows about 20 messages a minute into one group
# Of the minute, what command replies may not take: the games' own messages always find room.
RESERVED_FOR_GAMES = 6
SEND_WINDOW = 60.0


@dataclass(frozen=True, slots=True)
class Plan:
    """What one attempt at an action owes: its requests, and what its write stores."""

    requests: tuple[Request, ...] = ()
    answer: Answer | None = None  # the button's answer: the webhook's reply, or a request
    write: bool = False  # whether the record is written (on the version read)
    # Whether the write changes what the game's screens show: a decision written, or moments
    # owed the group (these go out with the table drawn anew).
    changes: bool = False
    parcels: tuple[Parcel, ...] = ()  # the moments this write takes to send, marked after
    # What the write stores: the table's note, the outbox (the parcels someone else holds, then
    # these), the hands drawn for a retry, who is looking at the bot.
    note: str | None = None
    outbox: tuple[Parcel, ...] = ()
    drawn: int | None = None
    looking: Mapping[int, float] = field(default_factory=dict)
    # The group's flood budget: the times of the minute's group messages as read (`recent`),
    # and the new ones this action sends (`new`: added to the store before sending).
    recent: tuple[float, ...] = ()
    new: tuple[float, ...] = ()
    sends_read: int = 0
    room: float | None = None  # when the minute has room for the moments it could not take

    @property
    def sends(self) -> tuple[float, ...]:
        return (*self.recent, *self.new)

    def keep(self, record: Record) -> None:
        """Copy into `record` (about to be written) what this plan stores with the write."""
        record.note, record.outbox, record.drawn = self.note, list(self.outbox), self.drawn
        record.looking = dict(self.looking)


def plan(
    before: Game | None,
    record: Record,
    decision: Decision,
    now: float,
    *,
    update_id: int | None = None,
    mine: Set[int] = frozenset(),
    duplicate: bool = False,
    query: CallbackQuery | None = None,
) -> Plan:
    """The plan of `decision`, taken on `record` (as the act left it; the game was `before`).

    `update_id` and `mine` say which owed moments are this update's to send (`outbox.pack`);
    `duplicate`: the update was applied already, and only redraws; `query`: the press to
    answer."""
    # The flood budget is counted on the record as read, where the last game's table still
    # stands: a new game's first table is not counted, which spares /newgame the budget's write.
    read = record
    if decision.new_game:
        # A new game has no messages yet: planned as its write will leave the record.
        record = dataclasses.replace(record)
        record.forget_messages()
    stored, parcels = outbox.pack(
        record,
        decision.events,
        now,
        silent=decision.silent,
        update_id=update_id,
        mine=mine,
        new_game=decision.new_game,
    )
    # Moments go out with the table drawn anew, even from a timer with nothing else to do or
    # a retried update.
    changes = decision.write or bool(parcels)
    redraw = decision.redraw or bool(parcels)
    budget = _budget(before, read, decision, parcels, now, changes=changes)
    # A reply into the group is written too (with its update id, so that Telegram's retry is
    # not answered again), unless the chat has no record yet: a group (or a topic) the bot
    # never played in. Its time counts in the chat's budget either way.
    counted = bool(budget.new) and record.version > 0
    write = (changes or counted) and not (duplicate and not parcels)
    drawn, changed = record.drawn, None
    if write and update_id is not None and not duplicate:
        drawn, changed = hands_drawn(before, record, decision, now, changes=changes, redraw=redraw)
    looking = dict(record.looking)  # the plan keeps its own: the record may change after
    if query is not None and write and changes:
        looking = pressing(record, query.from_user.id, now)
    room = None
    if len(budget.told) < len(parcels):
        # Moments the minute has no room for: the timer sends them once it has.
        room = room_at(budget.recent + budget.new, record.hold, now)
    requests = screens(
        before,
        record,
        decision,
        now,
        budget=budget,
        changes=changes,
        redraw=redraw,
        looking=looking,
        changed=changed,
    )
    answer = None
    if query is not None:
        if decision.refusal and query.message is not None and query.message.chat.id > 0:
            # A refused press in a private chat may come from a stale hand: redraw it.
            drawn_now = hand_screens(record, {query.from_user.id}, now)
            requests += hand_requests(record, drawn_now)
        answer = Answer(query.id, decision.refusal or decision.answer, decision.link)
    return Plan(
        tuple(requests),
        answer,
        write=write,
        changes=changes,
        parcels=tuple(parcels),
        note=budget.note,
        outbox=tuple(stored),
        drawn=drawn,
        looking=looking,
        recent=budget.recent,
        new=budget.new,
        sends_read=record.sends_read,
        room=room,
    )


def reply(decision: Decision, query: CallbackQuery | None) -> Plan:
    """The plan of an act decided without a record: its requests and the button's answer,
    nothing written (a card toggle, a button's answer, a fixed reply in private)."""
    answer = None
    if query is not None:
        answer = Answer(query.id, decision.refusal or decision.answer, decision.link)
    return Plan(tuple(decision.extra), answer)


@dataclass(frozen=True, slots=True)
class _Budget:
    """The new group messages an action sends within the minute's flood limit."""

    note: str | None  # the table's line about the latest events
    told: list[tuple[int, Screen]]  # the moments sent, by stamp
    extra: list[Request]  # the decision's extras, less the replies the minute has no room for
    table_again: bool  # /table's new table message, if the minute has room
    recent: tuple[float, ...]  # the times of the minute's group messages, as read
    new: tuple[float, ...]  # one per new group message this action sends


def _budget(
    before: Game | None,
    record: Record,
    decision: Decision,
    parcels: list[Parcel],
    now: float,
    *,
    changes: bool,
) -> _Budget:
    """Every new group message counts: the table's first message, the moments (a challenge, a
    final play, the end: `parcels`, by stamp), command replies (/table, /rules, /help, /join,
    /addbot, a language prompt, a refusal). Command replies go first, and never take the
    minute's last `RESERVED_FOR_GAMES` (dropped from the extras; /table edits the table instead
    of sending it anew); moments are never dropped: those the minute has no room for stay in
    the outbox, sent in order once it has. While Telegram's own wait after a 429 lasts
    (`hold`), nothing new goes in. The budget is the chat's, shared by every topic's game and
    every reply."""
    game = record.game
    recent = tuple(s for s in record.sends if now - s < SEND_WINDOW)
    if decision.silent:
        return _Budget(record.note, [], list(decision.extra), decision.table_again, recent, ())
    note = record.note
    if game is not None and decision.events:
        told_now = announcements.note(decision.events, game, record.lang, before)
        note = note if told_now is None else told_now
    first_table = game is not None and record.table_msg is None
    first_table = first_table and (changes or decision.table_again)
    again = decision.table_again and record.table_msg is not None
    replies = [r for r in decision.extra if isinstance(r, Send) and r.chat_id == record.chat]
    waiting = record.hold is not None and now < record.hold
    room = 0 if waiting else max(0, GROUP_SENDS_PER_MINUTE - len(recent) - first_table)
    told = []
    if game is not None:
        place, lang = record.place, record.lang
        told = [(p.stamp, outbox.screen(p, game, place, lang, now)) for p in parcels[:room]]
    room -= len(told)
    answered = replies[: max(0, room - RESERVED_FOR_GAMES)]
    room -= len(answered)
    dropped = replies[len(answered) :]
    extra = [r for r in decision.extra if not any(r is d for d in dropped)]
    table_again = decision.table_again
    if again and room <= RESERVED_FOR_GAMES:
        table_again = again = False
    count = first_table + len(told) + len(answered) + again
    return _Budget(note, told, extra, table_again, recent, (now,) * count)


def group_room(sends: Sequence[float], now: float) -> int:
    """New group messages the minute still allows, after the group messages sent at `sends`."""
    return max(0, GROUP_SENDS_PER_MINUTE - sum(now - s < SEND_WINDOW for s in sends))


def room_at(sends: Sequence[float], hold: float | None, now: float) -> float:
    """When the minute next has room for a group message, and Telegram's wait (`hold`) is
    over."""
    recent = sorted(s for s in sends if now - s < SEND_WINDOW)
    at = now
    if len(recent) >= GROUP_SENDS_PER_MINUTE:
        at = recent[len(recent) - GROUP_SENDS_PER_MINUTE] + SEND_WINDOW
    return max(at, hold or at)


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
    now: float,
    *,
    budget: _Budget,
    changes: bool,
    redraw: bool,
    looking: Mapping[int, float],
    changed: dict[int, Screen] | None = None,
) -> list[Request]:
    """Every request the decision owes: its extras, the table, the moments, the hands (`changed`:
    the hands the write changed, when `hands_drawn` drew them already). Every message into the
    group goes to the game's forum topic, if it is played in one; none goes there at all once
    the group (or the topic) is closed to the bot. `changes`, `redraw`: the plan's (a decision
    written or moments owed); `budget`: what the minute has room for."""
    chat, thread = record.chat, record.topic
    requests: list[Request] = [
        replace(r, thread=thread) if isinstance(r, Send) and r.chat_id == chat else r
        for r in budget.extra
    ]
    game = record.game
    duplicate = decision.result is Result.DUPLICATE
    table_again = budget.table_again
    if game is None or not redraw or not (changes or table_again or duplicate):
        return requests
    requests += clock_notices(record, decision.events)
    requests += turn_taken(before, record, decision.events)
    if decision.silent:
        requests = [r for r in requests if getattr(r, "chat_id", None) != chat]
        if changed is None:
            changed = changed_hands(before, record, now)
        return requests + hand_requests(record, changed)
    table = render.table(
        game, record.place, record.lang, now, budget.note, not_back=record.not_back()
    )
    if record.table_msg is None or table_again:
        requests.append(Send(chat, table, "table", thread))
        if record.table_msg is not None:
            # The old table keeps its buttons unless the new one arrives.
            requests.append(EditButtons(chat, record.table_msg, (), after="table"))
    else:
        requests.append(Edit(chat, record.table_msg, table, "table", thread))
    # A final play's buttons are taken off once it is settled; the end's Play again stays.
    final = game.phase is not Phase.OVER
    requests += [
        Send(chat, screen, moment_key(stamp, screen, final), thread)
        for stamp, screen in budget.told
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
    elif changes:
        if changed is None:
            changed = changed_hands(before, record, now)
        requests += hand_requests(record, changed)
    if changes:  # every hand drawn or not, whoever's turn the write brought is told
        requests += turn_ping(before, record, now, looking)
    return requests


def turn_ping(
    before: Game | None, record: Record, now: float, looking: Mapping[int, float]
) -> list[Request]:
    """A short private line to the person whose turn (to play, or to decide on a final play)
    this write brought: a new message notifies their phone, where the hand's edit does not. The
    hand stays the one message with buttons, edited in place, so a line that fails to arrive
    loses nothing. Once a turn; none to someone who pressed a button in the last
    `LOOKING_SECONDS` (`looking`: they are looking already), nor when a game starts (the hands
    are new messages then)."""
    game = record.game
    running = (Phase.PLAY, Phase.DECIDE)
    if game is None or before is None or before.phase not in running or game.phase not in running:
        return []
    player = game.awaited
    if player is None or player < 0 or (player, game.phase) == (before.awaited, before.phase):
        return []
    if player in record.unreachable:
        return []
    if now - looking.get(player, -LOOKING_SECONDS) < LOOKING_SECONDS:
        return []
    lang = record.lang_of(player)
    if game.phase is Phase.DECIDE and game.last is not None:
        finalist = render.name_of(game, game.ids[game.last.seat], lang)
        text = t(lang, "ping_decide", group=record.title, player=finalist)
    else:
        text = t(lang, "ping_play", group=record.title)
    return [Send(player, Screen(text))]


def pressing(record: Record, presser: int, now: float) -> dict[int, float]:
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


def turn_taken(before: Game | None, record: Record, events: Sequence[ev.Event]) -> list[Request]:
    """R10, R11: until the person awaited plays (or decides on a final play), anyone else may
    shout Liar! at the play before, and the challenge's winner plays instead. That person is
    told once, in private and in their language, what happened and who plays now: their hand's
    edit alone would only lose its buttons and the cards they had selected."""
    game = record.game
    if before is None or game is None or game.phase not in (Phase.PLAY, Phase.DECIDE):
        return []
    person = before.awaited
    if person is None or person < 0 or person == game.awaited or person in record.unreachable:
        return []
    for e in events:
        if isinstance(e, ev.Challenged) and person not in (e.accuser, e.player):
            lang = record.lang_of(person)
            text = announcements.turn_taken(e, game, lang, decided=before.phase is Phase.DECIDE)
            return [Send(person, Screen(text))]
    return []


def hands_drawn(
    before: Game | None,
    record: Record,
    decision: Decision,
    now: float,
    *,
    changes: bool,
    redraw: bool,
) -> tuple[int, dict[int, Screen] | None]:
    """The seats whose hands `decision`, written, draws (a mask), to keep with its update:
    Telegram's retry of it draws those again and no other, since a hand drawn again loses the
    cards its owner was ticking. With them the changed hands' screens, when it drew them, for
    `screens` to send without drawing them again. `changes`, `redraw`: the plan's (moments
    owed count as a decision written, which redraws)."""
    game = record.game
    if game is None or game.phase is Phase.LOBBY or not redraw:
        return 0, None
    if decision.all_hands:
        return (1 << len(game.ids)) - 1, None
    if not changes:
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
    if before is not None and before.phase is Phase.LOBBY and game.phase is Phase.OVER:
        return {}  # a lobby ended (stopped, or its group gone): nobody was dealt a hand
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
