"""Menteur's rules (RULES.md) as a pure, replayable state machine. Standard library only.

game = open_table(opener, now, "Ann")
game, events = apply(game, Join(bob, "Bob"), now)
game, events = apply(game, Start(ann, seed), now)
view(game, ann, now)             # what Ann may see; never anyone else's cards
encode(game) / decode(value)     # the stored form
"""

from engine.cards import RANKS, SUITS, card_name, cards_in, count, mask_of, parse_card
from engine.codec import CodecError, decode, encode
from engine.errors import Code, IllegalMove, InvalidMove, MenteurError
from engine.game import (
    BULLETS,
    DECISION_SECONDS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Game,
    Phase,
    apply,
    can,
    open_table,
    settle,
    verify,
)
from engine.moves import (
    Expire,
    Forfeit,
    Join,
    Leave,
    LetItStand,
    Move,
    Play,
    Shout,
    Start,
    Stop,
    Timeout,
)
from engine.view import CallView, SeatView, View, view

__all__ = [
    "BULLETS",
    "DECISION_SECONDS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "RANKS",
    "SUITS",
    "CallView",
    "Code",
    "CodecError",
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
    "SeatView",
    "Shout",
    "Start",
    "Stop",
    "Timeout",
    "View",
    "apply",
    "can",
    "card_name",
    "cards_in",
    "count",
    "decode",
    "encode",
    "mask_of",
    "open_table",
    "parse_card",
    "settle",
    "verify",
    "view",
]
