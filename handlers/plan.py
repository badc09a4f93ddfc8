"""Planning: what one decided action owes, as a value. Pure: it reads the record as decided on
and the decision, and changes neither.

A `Plan` holds the requests to send once the record is written (the group's table edited, or
sent the first time or after /table; the moments players must notice as new group messages,
within the group's flood budget; only the private hands the move changed), the button's answer,
and what the write stores with it (the table's note, the outbox, the hands drawn, who is
looking, the group messages it spends). The transaction (`handlers.service`) writes the record
with it, then sends the requests (`handlers.telegram_io`), and `handlers.learn` reads what
sending taught.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import replace
from types import MappingProxyType
from typing import NamedTuple

from telegram import CallbackQuery

from engine import Game, Phase
from engine import events as ev
from handlers import announcements, outbox, render, telegram_io, timing
from handlers.item import SEND_WINDOW, Write
from handlers.outbox import Packed, Parcel
from handlers.outcomes import Decision, Result
from handlers.screens import (
    Answer,
    Edit,
    EditButtons,
    HandSlot,
    MomentSlot,
    Request,
    Screen,
    Send,
    TableSlot,
)
from handlers.store import RECENT_UPDATES, Record
from handlers.text import t

# A person who pressed a button this long ago is still looking at the bot: no turn ping.
LOOKING_SECONDS = 5.0
# A person pinged is not pinged again within this, unless they pressed a button since.
PING_EVERY = 60.0
GROUP_SENDS_PER_MINUTE = 18  # Telegram allows about 20 messages a minute into one group
# Of the minute, what only a running game's moments may take: a lobby's table and its
# messages, and command replies, never take the last ones.
RESERVED_FOR_GAMES = 6


class Plan(NamedTuple):
    """What one attempt at an action owes: its requests, and what its write stores."""

    requests: tuple[Request, ...] = ()
    # The button's answer, as the webhook's reply (Telegram performs it: no request of ours);
    # or, when there is no webhook (long polling), first among the requests.
    webhook_reply: dict[str, object] | None = None
    write: bool = False  # whether the record is written (on the version read)
    # Whether the write changes what the game's screens show: a decision written, or moments
    # owed the group (these go out with the table drawn anew).
    changes: bool = False
    # The outbox as the write leaves it, what it sends now (marked after), and the marks it
    # changes.
    packed: Packed = outbox.EMPTY
    # A moment sent now whose message keeps buttons (a final play's): its id is kept.
    final: int | None = None
    # What the write stores besides: the table's note, the hands a retry draws again, who is
    # looking at the bot and who was pinged.
    note: str | None = None
    retry_hands: int | None = None
    looking: Mapping[int, float] = MappingProxyType({})
    pinged: Mapping[int, float] = MappingProxyType({})
    # The group messages this action sends, counted in the chat's budget by its write.
    spent: tuple[float, ...] = ()
    # When the minute next has room, for what it could not send now: the moments left in the
    # outbox (the timer looks then), and a table never sent (the screens are owed a redraw).
    look: float | None = None
    owe: float | None = None


def of(
    before: Game | None,
    record: Record,
    decision: Decision,
    now: float,
    *,
    update_id: int | None = None,
    mine: Set[int] = frozenset(),
    duplicate: bool = False,
    query: CallbackQuery | None = None,
    webhook: bool = True,
) -> Plan:
    """The plan of `decision`, taken on `record` (as the act left it; the game was `before`).

    `update_id` and `mine` say which owed moments are this update's to send (`outbox.pack`);
    `duplicate`: the update was applied already, and only redraws; `query`: the press to
    answer, on the webhook's response (`webhook`) or by a request."""
    if decision.new_game:
        # A new game has no messages yet: planned as its write will leave the record.
        record = record.forgotten()
    budget = _Budget.of(before, record, decision, now)
    closed = decision.chat_closed or record.game is None or decision.new_game
    packed = outbox.pack(
        record.outbox,
        record.marks,
        None if closed else record.game,
        decision.events,
        now,
        version=record.version,
        room=budget.moments,
        update_id=update_id,
        mine=mine,
    )
    owed_moments = any(not record.marks.get(p.stamp) for p in packed.outbox)
    # Moments go out with the table drawn anew, even from a timer with nothing else to do or
    # a retried update.
    changes = decision.write or bool(packed.taken)
    redraw = decision.redraw or bool(packed.taken)
    budget = budget.told(record, decision, len(packed.taken), changes=changes)
    # A reply into the group is written too (with its update id, so that Telegram's retry is
    # not answered again), unless the chat has no record yet: a group (or a topic) the bot
    # never played in. Its time counts in the chat's budget either way.
    counted = bool(budget.spent) and record.version > 0
    write = (changes or counted) and not (duplicate and not packed.taken)
    retry_hands, changed = record.retry_hands, None
    if write and update_id is not None and not duplicate:
        retry_hands, changed = hands_drawn(
            before, record, decision, now, changes=changes, redraw=redraw
        )
    looking, pinged = dict(record.looking), _recent(record.pinged, now, PING_EVERY)
    if query is not None and write and changes:
        looking = pressing(record, query.from_user.id, now)
        pinged.pop(query.from_user.id, None)  # they act: the next turn may ping them again
    look = owe = None
    if owed_moments and len(packed.taken) < len(packed.outbox):
        # Moments the minute has no room for: the timer sends them once it has.
        look = room_at([*budget.recent, *budget.spent], record.hold, now)
    if budget.table_waits:
        owe = room_at([*budget.recent, *budget.spent], record.hold, now)
    requests, told = screens(
        before,
        record,
        decision,
        now,
        budget=budget,
        taken=packed.taken,
        changes=changes,
        redraw=redraw,
        looking=looking,
        pinged=pinged,
        changed=changed,
    )
    if told is not None:
        pinged[told] = now
    private = query is not None and query.message is not None and query.message.chat.id > 0
    if query is not None and decision.refusal and private:
        # A refused press in a private chat may come from a stale hand: redraw it.
        drawn_now = hand_screens(record, {query.from_user.id}, now)
        requests += hand_requests(record, drawn_now)
    answered, webhook_reply = _answered(requests, decision, query, webhook)
    final = None
    if record.game is not None and record.game.phase is not Phase.OVER:
        # The latest moment sent with buttons (Liar!, Let it stand): they go once it is settled.
        final = next((p.stamp for p in reversed(packed.taken) if _asks(p)), None)
    return Plan(
        answered,
        webhook_reply,
        write=write,
        changes=changes,
        packed=packed,
        final=final,
        note=budget.note,
        retry_hands=retry_hands,
        looking=looking,
        pinged=pinged,
        spent=budget.spent,
        look=look,
        owe=owe,
    )


def written(  # noqa: PLR0917 - the transaction's one call, and the item benchmark's
    record: Record,
    decision: Decision,
    planned: Plan,
    now: float,
    update_id: int | None,
    writer: str,
    idle_expiry: float,
) -> Write:
    """The write of `decision` on `record` (as the act left it) by `writer`, with what its plan
    stores: the record as the write leaves it, said in this one place. `update_id`: the update
    it applies (None: the timer's, or a retried update's, which adds none)."""
    packed = planned.packed
    carried = {p.stamp for p in packed.outbox}
    updates = record.updates if update_id is None else [*record.updates, update_id]
    owed, owed_hands = record.owed, record.owed_hands and record.redrawn is None
    if planned.owe is not None:
        owed = max(owed or planned.owe, planned.owe)
    after = replace(
        record.forgotten() if decision.new_game else record,
        version=record.version + 1,
        note=planned.note,
        outbox=list(packed.outbox),
        marks={s: v for s, v in record.marks.items() if s in carried}
        | dict.fromkeys(packed.given_up, False),
        retry_hands=planned.retry_hands,
        looking=dict(planned.looking),
        pinged=dict(planned.pinged),
        updates=updates[-RECENT_UPDATES:],
        writer=writer,
        owed=owed,
        owed_hands=owed_hands,
        redrawn=None,
    )
    look = timing.next_look(after, idle_expiry)
    if planned.look is not None:
        look = planned.look if look is None else min(look, planned.look)
    expires = timing.expiry(after, now, idle_expiry)
    return Write(
        replace(after, next_look=look, expires=expires),
        now,
        new_game=decision.new_game,
        dropped=packed.dropped,
        given_up=packed.given_up,
        spent=planned.spent,
        owe=planned.owe,
        settles=record.redrawn,
        with_hands=record.owed_hands,
    )


def without_record(
    decision: Decision, query: CallbackQuery | None, *, webhook: bool = True
) -> Plan:
    """The plan of an act decided without a record: its requests and the button's answer,
    nothing written (a card toggle, a button's answer, a fixed reply in private)."""
    return Plan(*_answered(list(decision.extra), decision, query, webhook))


def _answered(
    requests: list[Request], decision: Decision, query: CallbackQuery | None, webhook: bool
) -> tuple[tuple[Request, ...], dict[str, object] | None]:
    """The requests with the press's answer (`query`), and the webhook's reply that carries it
    when there is a webhook (`webhook`): else the answer is the first request."""
    if query is None:
        return tuple(requests), None
    answer = Answer(query.id, decision.refusal or decision.answer, decision.link)
    if webhook:
        return tuple(requests), telegram_io.webhook_reply(answer)
    return (answer, *requests), None


def _asks(parcel: Parcel) -> bool:
    """Whether the parcel's message asks for a decision (its buttons go once it is taken)."""
    return isinstance(parcel.events[-1], ev.FinalPlay | ev.DecisionPassed)


def _recent(times: Mapping[int, float], now: float, within: float) -> dict[int, float]:
    return {p: at for p, at in times.items() if now - at < within}


class _Budget(NamedTuple):
    """The new group messages an action sends within the chat's flood budget (shared by every
    topic's game and every reply). Every new group message counts: a table's first message, the
    moments (a challenge, a final play, the end), command replies (/table, /rules, /help,
    /join, /addbot, a language prompt, a refusal). A dealt game's moments come first, and may
    take the whole minute; a lobby's (its table's first message, its stop) and command replies
    never take its last `RESERVED_FOR_GAMES`, so that a lobby churned in one topic never holds
    up a game played in another. Moments are never dropped: those the minute has no room for
    stay owed in the outbox, sent in order once it has; nor is a table's first message (owed: a
    redraw then). A reply is dropped, and /table edits the table instead of sending it anew.
    While Telegram's own wait after a 429 lasts (`hold`), nothing new goes in."""

    now: float
    note: str | None  # the table's line about the latest events
    recent: tuple[float, ...]  # the times of the minute's group messages, as read
    room: int  # new group messages the minute has room for
    moments: int  # how many of them the moments may take
    first_table: bool = False  # the table's first message is sent
    table_waits: bool = False  # it has no room: owed
    extra: tuple[Request, ...] = ()  # the decision's extras, less the replies with no room
    table_again: bool = False  # /table's new table message, if the minute has room
    spent: tuple[float, ...] = ()  # one per new group message this action sends

    @staticmethod
    def of(before: Game | None, record: Record, decision: Decision, now: float) -> _Budget:
        """The minute's room, before anything is told."""
        game = record.game
        recent = tuple(s for s in record.sends if now - s < SEND_WINDOW)
        note = record.note
        if game is not None and decision.events and not decision.chat_closed:
            told_now = announcements.note(decision.events, game, record.lang, before)
            note = note if told_now is None else told_now
        waiting = record.hold is not None and now < record.hold
        room = 0 if waiting or decision.chat_closed else GROUP_SENDS_PER_MINUTE - len(recent)
        room = max(0, room)
        dealt = game is not None and bool(game.hands)
        moments = room if dealt else max(0, room - RESERVED_FOR_GAMES)
        return _Budget(now, note, recent, room, moments, extra=tuple(decision.extra))

    def told(self, record: Record, decision: Decision, moments: int, *, changes: bool) -> _Budget:
        """What else goes in once `moments` are told: the table's first message, the replies
        into the group, /table's new table, each within what the minute has left."""
        if decision.chat_closed:
            return self
        left = self.room - moments
        game = record.game
        wanted = game is not None and record.table_msg is None
        wanted = wanted and (changes or decision.table_again)
        first_table = wanted and left > RESERVED_FOR_GAMES
        left -= first_table
        replies = [r for r in decision.extra if isinstance(r, Send) and r.chat_id == record.chat]
        answered = replies[: max(0, left - RESERVED_FOR_GAMES)]
        left -= len(answered)
        dropped = replies[len(answered) :]
        extra = tuple(r for r in decision.extra if not any(r is d for d in dropped))
        again = decision.table_again and record.table_msg is not None
        table_again = decision.table_again and (again and left > RESERVED_FOR_GAMES)
        count = first_table + moments + len(answered) + table_again
        return self._replace(
            first_table=first_table,
            table_waits=wanted and not first_table,
            extra=extra,
            table_again=table_again,
            spent=(self.now,) * count,
        )


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


def screens(
    before: Game | None,
    record: Record,
    decision: Decision,
    now: float,
    *,
    budget: _Budget,
    taken: Sequence[Parcel],
    changes: bool,
    redraw: bool,
    looking: Mapping[int, float],
    pinged: Mapping[int, float],
    changed: dict[int, Screen] | None = None,
) -> tuple[list[Request], int | None]:
    """Every request the decision owes: its extras, the table, the moments `taken`, the hands
    (`changed`: the hands the write changed, when `hands_drawn` drew them already); and who is
    pinged, if anyone. Every message into the group goes to the game's forum topic, if it is
    played in one; none goes there at all once the group (or the topic) is closed to the bot.
    `changes`, `redraw`: the plan's (a decision written or moments owed); `budget`: what the
    minute has room for."""
    chat, thread = record.chat, record.topic
    requests: list[Request] = [
        replace(r, thread=thread) if isinstance(r, Send) and r.chat_id == chat else r
        for r in budget.extra
    ]
    game = record.game
    duplicate = decision.result is Result.DUPLICATE
    table_again = budget.table_again
    if game is None or not redraw or not (changes or table_again or duplicate):
        return requests, None
    requests += clock_notices(record, decision.events)
    requests += turn_taken(before, record, decision.events)
    if decision.chat_closed:
        requests = [r for r in requests if getattr(r, "chat_id", None) != chat]
        if changed is None:
            changed = changed_hands(before, record, now)
        return requests + hand_requests(record, changed), None
    table = render.table(
        game, record.place, record.lang, now, budget.note, not_back=record.not_back()
    )
    if budget.first_table or table_again:
        requests.append(Send(chat, table, TableSlot(), thread))
        if record.table_msg is not None:
            # The old table keeps its buttons unless the new one arrives.
            requests.append(EditButtons(chat, record.table_msg, (), after=TableSlot()))
    elif record.table_msg is not None:
        requests.append(Edit(chat, record.table_msg, table, TableSlot(), thread))
    place, lang = record.place, record.lang
    requests += [
        Send(chat, outbox.screen(p, game, place, lang, now), MomentSlot(p.stamp), thread)
        for p in taken
    ]
    # The final play is settled: its buttons go. A retried update or a redraw cannot tell
    # whether the first delivery took them off, so it does again ("not modified" is success).
    settled = before is not None and before.phase is Phase.DECIDE
    again = duplicate or decision.all_hands or decision.owed
    if (settled or again) and game.phase is not Phase.DECIDE and record.final_msg is not None:
        requests.append(EditButtons(chat, record.final_msg, ()))
    if game.phase is Phase.LOBBY:
        return requests, None
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
    if not changes:
        return requests, None
    # Every hand drawn or not, whoever's turn the write brought is told.
    ping = turn_ping(before, record, now, looking, pinged)
    if ping is None:
        return requests, None
    return [*requests, ping], ping.chat_id


def turn_ping(
    before: Game | None,
    record: Record,
    now: float,
    looking: Mapping[int, float],
    pinged: Mapping[int, float],
) -> Send | None:
    """A short private line to the person whose turn (to play, or to decide on a final play)
    this write brought: a new message notifies their phone, where the hand's edit does not. The
    hand stays the one message with buttons, edited in place, so a line that fails to arrive
    loses nothing. Once a turn, and at most once in `PING_EVERY` unless they pressed a button
    since (`pinged`: two others taking turns cannot ring a third's phone at every press); none
    to someone who pressed a button in the last `LOOKING_SECONDS` (`looking`: they are looking
    already), nor when a game starts (the hands are new messages then)."""
    game = record.game
    running = (Phase.PLAY, Phase.DECIDE)
    if game is None or before is None or before.phase not in running or game.phase not in running:
        return None
    player = game.awaited
    if player is None or player < 0 or (player, game.phase) == (before.awaited, before.phase):
        return None
    if player in record.unreachable or player in pinged:
        return None
    if now - looking.get(player, -LOOKING_SECONDS) < LOOKING_SECONDS:
        return None
    lang = record.lang_of(player)
    if game.phase is Phase.DECIDE and game.last is not None:
        finalist = render.name_of(game, game.ids[game.last.seat], lang)
        text = t(lang, "ping_decide", group=record.title, player=finalist)
    else:
        text = t(lang, "ping_play", group=record.title)
    return Send(player, Screen(text))


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
    if record.retry_hands is None or not record.updates or record.updates[-1] != update_id:
        return None
    if game is None:
        return set()
    return {p for s, p in enumerate(game.ids) if record.retry_hands >> s & 1}


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
        slot = HandSlot(player)
        message = record.hand_msgs.get(player)
        requests.append(
            Send(player, screen, slot) if message is None else Edit(player, message, screen, slot)
        )
    return requests
