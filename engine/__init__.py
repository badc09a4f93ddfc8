"""Menteur's rules (RULES.md) as a pure, replayable state machine. Standard library only.

game = open_table(opener, now, "Ann")   # R20's clock: 90 s unless `clock=` or SetClock says
game, events = apply(game, Join(bob, "Bob"), now)
game, events = apply(game, Start(ann, seed), now)
game, events = settle(game, now)  # what the clock decided by now (apply does it first too)
view(game, ann, now)             # what Ann may see; never anyone else's cards
encode(game) / decode(value)     # the stored form
"""

from engine import events, strategy
from engine.cards import (
    RANKS,
    SUITS,
    card_name,
    cards_in,
    count,
    mask_of,
    parse_card,
    rank_of,
    suit_of,
)
from engine.codec import CodecError, decode, encode
from engine.errors import Code, IllegalMove, InvalidMove, MenteurError
from engine.events import Event, StopReason
from engine.game import apply, can, open_table, settle
from engine.legal import verify
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
from engine.state import (
    BULLETS,
    CLOCK_CHOICES,
    CLOCK_DEFAULT,
    DECISION_SECONDS,
    MAX_PLAY,
    MAX_PLAYERS,
    MIN_PLAYERS,
    UNTIMED_TURN,
    Game,
    Phase,
)
from engine.view import Bluff, CallView, SeatStats, SeatView, View, view

__all__ = [
    "BULLETS",
    "CLOCK_CHOICES",
    "CLOCK_DEFAULT",
    "DECISION_SECONDS",
    "MAX_PLAY",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "RANKS",
    "SUITS",
    "UNTIMED_TURN",
    "Bluff",
    "CallView",
    "Code",
    "CodecError",
    "Event",
    "Expire",
    "Forfeit",
    "Game",
    "IllegalMove",
    "InvalidMove",
    "Join",
    "Leave",
    "LetItStand",
    "MenteurError",
    "Move",
    "Phase",
    "Play",
    "SeatStats",
    "SeatView",
    "SetClock",
    "Shout",
    "Start",
    "Stop",
    "StopReason",
    "View",
    "VoteEnd",
    "apply",
    "can",
    "card_name",
    "cards_in",
    "count",
    "decode",
    "encode",
    "events",
    "mask_of",
    "open_table",
    "parse_card",
    "rank_of",
    "settle",
    "strategy",
    "suit_of",
    "verify",
    "view",
]
