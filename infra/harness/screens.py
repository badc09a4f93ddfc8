"""What the bot drew, read as a person reads it: buttons, card toggles, cards named in a text."""

from __future__ import annotations

import functools
import re
from typing import Any

from engine import parse_card
from handlers import callbacks
from handlers.callbacks import Kind
from infra.fake_telegram import StoredMessage

CARD = re.compile(r"(?:10|[A2-9VDR])[♠♥♦♣]")  # a card as the screens name it

# The same buttons are read again and again (a hand is redrawn on every move): each distinct
# data is decoded, and so checked, once; each card's name read once.
_decode = functools.lru_cache(maxsize=1 << 14)(callbacks.decode)
_card = functools.cache(parse_card)


def cards_in_text(text: str) -> set[str]:
    return set(CARD.findall(text))


def buttons(message: StoredMessage | None) -> list[dict[str, Any]]:
    rows = ((message.reply_markup if message else None) or {}).get("inline_keyboard", [])
    return [button for row in rows for button in row]


def button_texts(message: StoredMessage | None) -> str:
    return " | ".join(b["text"] for b in buttons(message))


def button(message: StoredMessage | None, kind: Kind) -> str | None:
    """The callback data of the message's button of that kind, if it shows one."""
    for b in buttons(message):
        data = b.get("callback_data")
        if data and _decode(data).kind is kind:
            return str(data)
    return None


def card_buttons(message: StoredMessage | None) -> dict[int, str]:
    """A hand message's card toggles: card → callback data."""
    found = {}
    for b in buttons(message):
        data = b.get("callback_data")
        if data and _decode(data).kind is Kind.TOGGLE:
            found[_card(b["text"].removeprefix("✓"))] = str(data)
    return found


def shown_cards(message: StoredMessage | None) -> set[int]:
    """The cards a hand message shows."""
    return set(card_buttons(message))


def selected(message: StoredMessage | None) -> set[int]:
    """The cards a hand message shows as selected (ticked)."""
    return {
        _card(b["text"].removeprefix("✓")) for b in buttons(message) if b["text"].startswith("✓")
    }
