"""A game's id in its buttons and links: unguessable, never the id of the game it replaces, and
the games stored before random ids still playable."""

from __future__ import annotations

import json
import secrets

from engine import Join, Phase, Shout, Start, apply, encode, open_table
from handlers import acts, lobby, render
from handlers.callbacks import GAME_IDS, decode
from handlers.outcomes import Result, Why
from handlers.service import Service
from handlers.store import Record
from infra.harness.memory import MemoryStore

CHAT = -1001234567890
T0 = 1_764_400_000.0


def legacy_document(game_no: int) -> str:
    """A record's document as the bot wrote it when games were numbered 1, 2, 3…"""
    game = open_table(11, T0, "Ann")
    game, _ = apply(game, Join(12, "Bob"), T0)
    game, _ = apply(game, Start(11, 5), T0)
    doc = {"g": encode(game), "n": game_no, "l": "en", "t": "Friday", "pl": ["", ""]}
    return json.dumps({**doc, "no": None, "u": [], "gs": []}, separators=(",", ":"))


def test_a_game_stored_before_random_ids_still_loads_and_its_buttons_still_work() -> None:
    record = Record(CHAT)
    record.read_document(legacy_document(3))
    assert record.game_id == 3 and record.game is not None
    awaited = record.game.awaited
    assert awaited is not None
    screen = render.hand(record.game, awaited, record.place, "en", T0)
    pressed = [decode(b.data) for row in screen.buttons for b in row if b.data]
    assert pressed and all(p.game == 3 for p in pressed)
    # A move from a button of that game is judged by the engine, not refused as another game's.
    decision = acts.PlayerMove(Shout(12, record.game.plays), 3, "en").decide(record, T0)
    assert decision.reason is not Why.OLD_GAME


def test_a_new_game_gets_a_random_id_in_nine_base36_digits() -> None:
    record = Record(CHAT)
    record.read_document(legacy_document(3))
    record.game = None
    drawn = secrets.SystemRandom().randrange(GAME_IDS.start, GAME_IDS.stop)
    decision = lobby.NewGame(11, "Friday", "en", drawn).decide(record, T0)
    assert decision.write and decision.new_game
    assert record.game_id == drawn and record.game is not None
    assert record.game.phase is Phase.LOBBY


def test_a_new_game_never_takes_the_id_of_the_game_it_replaces() -> None:
    for current in (GAME_IDS[0], GAME_IDS[12345], GAME_IDS[-1]):
        record = Record(CHAT, game_id=current)
        lobby.NewGame(11, "Friday", "en", current).decide(record, T0)
        assert record.game_id != current and record.game_id in GAME_IDS


def test_a_button_of_a_replaced_game_is_refused_whatever_its_id() -> None:
    record = Record(CHAT)
    lobby.NewGame(11, "Friday", "en", GAME_IDS[77]).decide(record, T0)
    for old in (0, 1, 3, GAME_IDS[76], GAME_IDS[78]):
        decision = acts.PlayerMove(Shout(12, 0), old, "en").decide(record, T0)
        assert decision.result is Result.REFUSED and decision.reason is Why.OLD_GAME


def test_game_ids_come_from_the_operating_systems_generator() -> None:
    service = Service(MemoryStore(), bot=None)  # type: ignore[arg-type]
    assert isinstance(service.game_ids, secrets.SystemRandom)
