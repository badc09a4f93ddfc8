"""What sending taught, as one value: a pure function of the record as written, its plan and
Telegram's answers (`telegram_io.Delivery`).

What the store keeps of it (`item.Kept`: the new messages' ids, who cannot be reached or can be
again, which moments went out, Telegram's wait in the group, a redraw owed) is written by one
write (`handlers.item.receipt`); besides, the notices it owes the group (a player the bot cannot
reach, told once) and what must follow (the game's end, when the group or its topic refuses the
bot; its move, when the group became a supergroup), which the transaction runs next.
"""

from __future__ import annotations

from typing import NamedTuple

from handlers.item import Kept
from handlers.outcomes import Decision
from handlers.plan import Plan, group_room
from handlers.render import name_of
from handlers.screens import HandSlot, MomentSlot, Request, Screen, Send, TableSlot
from handlers.store import Record
from handlers.telegram_io import Delivery
from handlers.text import t


class Learned(NamedTuple):
    """What one delivery taught: what to keep, what to tell, what follows."""

    kept: Kept
    notices: tuple[Request, ...] = ()  # into the group, once `kept` is written
    closed: bool = False  # the group (or the game's topic) refuses the bot: its game ends
    moved: int | None = None  # the supergroup the group became: its game moves there


def learned(
    record: Record, decision: Decision, plan: Plan, delivery: Delivery, now: float
) -> Learned:
    """What the delivery of `plan` (for `decision`, written as `record`) taught."""
    table = final = None
    hands: dict[int, int] = {}
    sent: set[int] = set()
    for slot, message in delivery.remembered.items():
        match slot:
            case TableSlot():
                table = message
            case HandSlot(player):
                hands[player] = message
            case MomentSlot(stamp):
                sent.add(stamp)
                if stamp == plan.final:
                    final = message
    game = record.game
    seated = set(game.ids if game else ())
    unreachable = frozenset((delivery.unreachable & seated) - record.unreachable)
    # A hand delivered (after /hand) shows the private chat is open again.
    reachable = frozenset((decision.reachable | set(hands)) & record.unreachable)
    waited = delivery.held.get(record.chat)
    hold = None if waited is None else now + waited
    owed = None if delivery.owed is None or record.version == 0 else now + delivery.owed
    closed = (record.chat, record.topic) in delivery.topics_gone or record.chat in delivery.kicked
    notices: list[Request] = []
    if unreachable and game is not None and not closed and hold is None:
        # Told once per player, after sending, while the group's minute has room.
        room = group_room([*record.sends, *plan.spent], now)
        lang = record.lang
        notices = [
            Send(
                record.chat,
                Screen(t(lang, "unreachable", name=name_of(game, p, lang))),
                thread=record.topic,
            )
            for p in sorted(unreachable)[:room]
        ]
    kept = Kept(
        table=table,
        final=final,
        hands=hands,
        unreachable=unreachable,
        reachable=reachable,
        marks={p.stamp: p.stamp in sent for p in plan.packed.taken},
        hold=hold,
        owed=owed,
        owed_hands=delivery.owed_hands,
        spent=(now,) * len(notices),
    )
    moved = delivery.migrated.get(record.chat)
    return Learned(kept, tuple(notices), closed, moved)
