"""The store's contract, held by both the DynamoDB adapter (on moto) and the in-memory fake: the
record read back as written, the conditional write, and what each write of `handlers.item`
changes (the receipt of a delivery, the flood budget)."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from engine import CLOCK_DEFAULT, Join, Phase, Start, apply, open_table, view
from engine import events as ev
from handlers import announcements, item, names
from handlers.dynamo import DynamoStore
from handlers.item import Kept
from handlers.names import NAME_LENGTH
from handlers.outbox import Parcel
from handlers.store import Conflict, Record, Store
from handlers.text import SUPPORTED
from infra.dynalite import Dynalite
from infra.harness.items import dynamodb, game_items, item_size
from infra.harness.limits import Limited
from infra.harness.memory import MemoryStore
from infra.table import create_table

CHAT = -100123


@contextmanager
def moto_table(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A moto DynamoDB client with the games table."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        client = Limited(boto3.client("dynamodb"))
        create_table(client, "games")
        yield client


@pytest.fixture(params=["memory", "dynamodb"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
        return
    with moto_table(monkeypatch) as client:
        yield DynamoStore(client, "games")


@pytest.fixture(params=["moto", "dynalite"])
def client(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A DynamoDB client with the games table: moto, and dynalite (what the local runner uses)."""
    if request.param == "moto":
        with moto_table(monkeypatch) as client:
            yield client
        return
    if shutil.which("node") is None:
        pytest.skip("Node.js (`node`) is not on PATH: dynalite cannot run")
    with Dynalite() as server:
        client = Limited(server.client())
        create_table(client, "games")
        yield client


def save(store: Store, record: Record, *, new_game: bool = False) -> Record:
    return item.save(store, record, new_game=new_game)


def keep(store: Store, chat: int, game_id: int, now: float = 100.0, **kept: Any) -> None:
    """What a delivery taught, kept for the game `game_id` of `chat` as the transaction keeps
    it (nothing, if another game is the chat's by then)."""
    record = store.load(chat)
    record.game_id = game_id
    for change in item.receipt(record, Kept(**kept), now):
        with contextlib.suppress(Conflict):
            store.apply(change)


def spend(store: Store, read: Record, now: float, times: list[float]) -> None:
    """Group messages sent at `times`, counted in the budget as read in `read`."""
    change = item.budget(read, now, times)
    try:
        store.apply(change)
    except Conflict:
        assert change.otherwise is not None
        store.apply(change.otherwise)


def a_record(chat: int = CHAT) -> Record:
    game = open_table(1, 100.0, "Ann")
    game, _ = apply(game, Join(2, "Bob"), 100.0)
    game, _ = apply(game, Start(1, 5), 100.0)
    return Record(chat, game=game, game_id=1, lang="ar", title="Friday", langs={2: "en"})


def test_a_chat_never_written_reads_as_a_new_record(store: Store) -> None:
    record = store.load(CHAT)
    assert record.version == 0 and record.game is None and record.chat == CHAT


def test_what_is_saved_is_read_back(store: Store) -> None:
    record = a_record()
    record.updates, record.note = [9, 7, 8], "n"
    record.outbox = [Parcel(16, 9, 100, (ev.Stopped(1),))]
    record.next_look, record.expires = 145.25, 900
    save(store, record, new_game=True)
    again = store.load(CHAT)
    assert again.version == 1
    assert (again.game, again.game_id, again.lang, again.title) == (record.game, 1, "ar", "Friday")
    assert (again.langs, again.updates, again.note) == ({2: "en"}, [9, 7, 8], "n")
    assert again.outbox == record.outbox and again.marks == {}
    assert (again.next_look, again.expires) == (145.25, 900)


def test_r20_the_chats_clock_and_the_reminded_moment_are_read_back(store: Store) -> None:
    record = a_record()
    record.clock, record.reminded = 30, 7
    save(store, record, new_game=True)
    again = store.load(CHAT)
    assert (again.clock, again.reminded) == (30, 7)
    again.clock, again.reminded = CLOCK_DEFAULT, None
    save(store, again)
    assert (store.load(CHAT).clock, store.load(CHAT).reminded) == (CLOCK_DEFAULT, None)


def test_the_chats_language_for_later_games_is_read_back_and_absent_when_the_same(
    store: Store,
) -> None:
    record = a_record()
    record.lang, record.later_lang = "ar", "en"  # the opener's choice for this game
    save(store, record, new_game=True)
    again = store.load(CHAT)
    assert (again.lang, again.later_lang) == ("ar", "en")
    again.later_lang = None
    save(store, again)
    assert store.load(CHAT).later_lang is None
    assert "ll" not in json.loads(store.load(CHAT).document())


def test_r20_an_item_written_before_the_clock_reads_as_the_default() -> None:
    record = a_record()
    document = json.loads(record.document())
    assert "c" not in document and "rm" not in document, "the defaults cost no bytes"
    record.clock, record.reminded = 0, 3
    written = json.loads(record.document())
    assert (written["c"], written["rm"]) == (0, 3)
    old = Record(CHAT)
    old.read_document(json.dumps(document))
    assert (old.clock, old.reminded) == (CLOCK_DEFAULT, None)


def test_the_last_game_its_people_and_who_pressed_lately_are_read_back(store: Store) -> None:
    record = a_record()
    lobby = open_table(1, 0.0)
    record.game, record.previous = lobby, 36**8 + 5
    record.previous_seats, record.looking = {1: "Ann", 2: "Bob"}, {2: 100.0}
    save(store, record, new_game=True)
    again = store.load(CHAT)
    assert (again.previous, again.previous_seats, again.looking) == (
        36**8 + 5,
        {1: "Ann", 2: "Bob"},
        {2: 100.0},
    )
    assert again.not_back() == ("Ann", "Bob")
    # Once the game starts, nobody is awaited back: the names are no longer written.
    again.game, _ = apply(apply(lobby, Join(1, "Ann"), 0.0)[0], Join(2, "Bob"), 0.0)
    again.game, _ = apply(again.game, Start(1, 3), 0.0)
    save(store, again)
    started = store.load(CHAT)
    assert (started.previous_seats, started.not_back(), started.previous) == ({}, (), 36**8 + 5)


# An item as the bot wrote it before French: a group reading Arabic, Bob's hand in English.
BEFORE_FRENCH = (
    '{"g":[3,1,100.0,1,[1,2],["Ann","Bob"],[4270873348111908,232726279258587],[3,3],[],0,0,0,'
    '0,0,null,null,190.0,null,1,90,0,0,"",0],"n":1,"l":"ar","t":"Friday","pl":["","en"],'
    '"no":null,"u":[],"gs":[]}'
)


@pytest.mark.parametrize("lang", [*SUPPORTED, "zz"])  # and a language no catalogue has yet
def test_a_chats_and_its_players_languages_round_trip_whatever_the_language(lang: str) -> None:
    record = a_record()
    record.lang, record.langs = lang, {1: lang, 2: SUPPORTED[-1]}
    written = record.document()
    assert f'"l":"{lang}"' in written, "the language's code, a few bytes"
    again = Record(CHAT)
    again.read_document(written)
    assert (again.lang, again.langs) == (lang, {1: lang, 2: SUPPORTED[-1]})
    assert again.lang_of(1) == lang


def test_an_item_written_before_french_still_reads() -> None:
    old = Record(CHAT)
    old.read_document(BEFORE_FRENCH)
    assert (old.lang, old.langs, old.lang_of(1), old.lang_of(2)) == ("ar", {2: "en"}, "ar", "en")
    assert old.game == a_record().game
    # Written back as it was but for the game, which the engine's codec writes in its newest
    # form, and the flood budget ("gs"), which is kept for the whole chat in an item of its own.
    written, before = json.loads(old.document()), json.loads(BEFORE_FRENCH)
    assert written.pop("g")[0] > before.pop("g")[0], "the game in the codec's newest version"
    assert written == {k: v for k, v in before.items() if k != "gs"}


def test_only_the_first_of_two_writers_from_one_version_wins(store: Store) -> None:
    save(store, a_record(), new_game=True)
    first, second = store.load(CHAT), store.load(CHAT)
    first.note = "first"
    save(store, first)
    second.note = "second"
    with pytest.raises(Conflict):
        save(store, second)
    assert store.load(CHAT).note == "first"
    with pytest.raises(Conflict):
        save(store, a_record())  # a "new" record where one exists


def test_message_ids_are_remembered_for_the_current_game_only(store: Store) -> None:
    save(store, a_record(), new_game=True)
    keep(store, CHAT, 1, table=10, final=11, hands={1: 20, 2: 21})
    keep(store, CHAT, 1, hands={2: 22}, unreachable=frozenset({2}))
    record = store.load(CHAT)
    assert (record.table_msg, record.final_msg) == (10, 11)
    assert record.hand_msgs == {1: 20, 2: 22} and record.unreachable == {2}
    keep(store, CHAT, 0, table=99)  # from an earlier game: ignored
    assert store.load(CHAT).table_msg == 10
    record = store.load(CHAT)
    save(store, record)  # a move keeps the ids
    assert store.load(CHAT).hand_msgs == {1: 20, 2: 22}
    record = store.load(CHAT)
    record.game_id = 2
    save(store, record, new_game=True)  # a new game forgets them
    again = store.load(CHAT)
    assert again.table_msg is None and again.hand_msgs == {}
    keep(store, CHAT, 2, unreachable=frozenset({3}))
    keep(store, CHAT, 2, reachable=frozenset({3}))
    assert store.load(CHAT).unreachable == set()


def test_who_could_not_be_reached_is_forgotten_when_a_new_game_opens(store: Store) -> None:
    """A player whose private chat refused the bot stayed listed in the chat's item across
    every later game: the list belongs to the game it was learnt in."""
    save(store, a_record(), new_game=True)
    keep(store, CHAT, 1, unreachable=frozenset({2, 3}))
    record = store.load(CHAT)
    save(store, record)  # a move of the same game keeps them
    assert store.load(CHAT).unreachable == {2, 3}
    record = store.load(CHAT)
    record.game_id = 2
    saved = save(store, record, new_game=True)
    assert saved.unreachable == set() and store.load(CHAT).unreachable == set()


def test_due_lists_the_chats_whose_timer_has_come(store: Store) -> None:
    for chat, due in ((-1, 50.0), (-2, 150.0), (-3, None)):
        record = a_record(chat)
        record.next_look = due
        save(store, record, new_game=True)
    assert store.overdue(100.0) == [(-1, None)]
    assert sorted(store.overdue(200.0)) == [(-2, None), (-1, None)]
    record = store.load(-1)
    record.next_look = None
    save(store, record)
    assert store.overdue(200.0) == [(-2, None)]


def test_an_owed_redraw_keeps_the_latest_mark_and_is_found_by_the_sweep(store: Store) -> None:
    record = a_record()
    record.next_look = 500.0
    save(store, record, new_game=True)
    keep(store, CHAT, 1, owed=130.25)
    keep(store, CHAT, 1, owed=120.0)  # an earlier wait: the later mark covers it
    record = store.load(CHAT)
    assert (record.owed, record.next_look) == (130.25, 130.25)
    assert store.overdue(131.0) == [(CHAT, None)]
    keep(store, CHAT, 1, owed=140.0)  # a longer wait: the mark moves; `due` stays as early
    assert (store.load(CHAT).owed, store.load(CHAT).next_look) == (140.0, 130.25)
    keep(store, -999, 1, owed=150.0)  # no game there: nothing is made
    assert store.load(-999).version == 0


def test_a_redraw_clears_only_the_mark_it_handled(store: Store) -> None:
    save(store, a_record(), new_game=True)
    keep(store, CHAT, 1, owed=130.0)
    record = store.load(CHAT)
    record.redrawn, record.owed = record.owed, None
    keep(store, CHAT, 1, owed=160.0)  # a newer flood limit meanwhile
    with pytest.raises(Conflict):
        save(store, record)
    record = store.load(CHAT)
    record.redrawn, record.owed = record.owed, None
    save(store, record)
    assert store.load(CHAT).owed is None
    record = store.load(CHAT)
    record.note = "a move"
    save(store, record)  # a move keeps a mark it did not handle
    keep(store, CHAT, 1, owed=170.0)
    record = store.load(CHAT)
    save(store, record)
    assert store.load(CHAT).owed == 170.0


def test_hands_owed_are_kept_until_a_redraw_that_read_them_settles_the_mark(store: Store) -> None:
    save(store, a_record(), new_game=True)
    keep(store, CHAT, 1, owed=130.0)  # the group's screens only
    assert not store.load(CHAT).owed_hands
    record = store.load(CHAT)
    record.redrawn, record.owed = record.owed, None
    keep(store, CHAT, 1, owed=120.0, owed_hands=True)  # earlier, but a hand given up too
    with pytest.raises(Conflict):
        save(store, record)  # a redraw that did not draw the hands leaves them owed
    record = store.load(CHAT)
    assert (record.owed, record.owed_hands) == (130.0, True)
    keep(store, CHAT, 1, owed=140.0)  # a later mark of the group's keeps the hands owed
    record = store.load(CHAT)
    assert (record.owed, record.owed_hands) == (140.0, True)
    record.redrawn, record.owed = record.owed, None
    save(store, record)
    record = store.load(CHAT)
    assert (record.owed, record.owed_hands) == (None, False)


def test_a_game_moves_with_its_group_when_it_becomes_a_supergroup(store: Store) -> None:
    save(store, a_record(-5), new_game=True)
    store.move(-5, -1005)
    store.move(-5, -1005)  # a retried update: harmless
    assert store.load(-5).version == 0
    assert store.load(-1005).game == a_record().game


class Interrupted:
    """A boto3 client on which `between` happens once, right after the first call of `after`."""

    def __init__(self, client: Any, after: str, between: Callable[[], None]) -> None:
        self.client, self.after, self.between = client, after, between
        self.done = False

    def __getattr__(self, name: str) -> Any:
        call = getattr(self.client, name)
        if name != self.after or self.done:
            return call

        def interrupted(**kwargs: Any) -> Any:
            self.done = True
            answer = call(**kwargs)
            self.between()
            return answer

        return interrupted


def test_a_move_made_on_the_old_chat_while_the_game_moves_is_refused(client: Any) -> None:
    """A hand's button still names the old chat: its write, landing after the item was marked
    as moving, is refused (the transaction then finishes the move and acts on the new id)."""
    store = DynamoStore(client, "games")
    refused = []
    late = (0, 0)

    def a_late_move() -> None:
        old, new = late
        record = store.load(old)
        assert record.moving == new, "the old item says where the game goes"
        record.note = "late"
        try:
            save(store, record)
        except Conflict:
            refused.append(old)

    # After the mark (the first update_item), and after the copy (put_item).
    for old, step in ((-5, "update_item"), (-6, "put_item")):
        save(store, a_record(old), new_game=True)
        new = old - 1000
        late = (old, new)
        DynamoStore(Interrupted(client, step, a_late_move), "games").move(old, new)
        moved = store.load(new)
        assert moved.note is None and moved.moving is None and moved.version == 1
        assert store.load(old).version == 0, "nothing is left under the old id"
    assert refused == [-5, -6]


def test_a_move_whose_delete_failed_is_finished_by_the_retry(client: Any) -> None:
    store = DynamoStore(client, "games")
    save(store, a_record(-5), new_game=True)

    def fail() -> None:
        raise ClientError({"Error": {"Code": "InternalServerError", "Message": "x"}}, "PutItem")

    with pytest.raises(ClientError):  # the copy is made; the delete never happens
        DynamoStore(Interrupted(client, "put_item", fail), "games").move(-5, -1005)
    assert store.load(-5).moving == -1005
    with pytest.raises(Conflict):
        save(store, store.load(-5))  # still refused
    store.move(-5, -1005)  # Telegram's retry of the migration update
    assert store.load(-5).version == 0, "no second copy left for old buttons to change"
    assert store.load(-1005).game == a_record().game
    assert store.load(-1005).moving is None


def test_the_chats_flood_budget_is_shared_by_its_topics_and_kept_beside_them(
    store: Store,
) -> None:
    spend(store, store.load(CHAT), 101.0, [100.0, 101.0])
    # Another topic's game: added, never in place of the others.
    spend(store, store.load(CHAT, 7), 102.5, [102.5])
    topic = store.load(CHAT, 7)
    assert topic.version == 0, "a topic with no game is not written for its replies"
    assert topic.sends == [100.0, 101.0, 102.5] == store.load(CHAT).sends
    assert store.load(CHAT - 1).sends == []
    # The times out of the minute go, only if nobody added any since the read; else added to.
    read = store.load(CHAT)
    spend(store, store.load(CHAT, 7), 150.0, [150.0])
    spend(store, read, 170.0, [170.0])
    assert store.load(CHAT).sends == [100.0, 101.0, 102.5, 150.0, 170.0]
    spend(store, store.load(CHAT), 171.0, [171.0])
    assert store.load(CHAT).sends == [150.0, 170.0, 171.0]
    # Telegram's wait: the latest kept.
    keep(store, CHAT, 0, hold=200.0)
    keep(store, CHAT, 0, hold=150.0)
    assert store.load(CHAT, 7).hold == 200.0
    assert store.load(CHAT).sends == [150.0, 170.0, 171.0]


def test_sent_marks_live_beside_the_document_until_a_write_drops_their_parcels(
    store: Store,
) -> None:
    record = a_record()
    record.outbox = [Parcel(16, 9, 100, (ev.Stopped(1),)), Parcel(17, 9, 100, (ev.Stopped(2),))]
    save(store, record, new_game=True)
    keep(store, CHAT, 1, marks={16: True, 17: False})
    again = store.load(CHAT)
    assert again.marks == {16: True, 17: False}
    assert again.undelivered() == [record.outbox[1]]
    again.outbox = again.undelivered()  # the next write keeps the one owed
    save(store, again)
    assert store.load(CHAT).marks == {17: False}
    keep(store, -999, 1, marks={16: True})  # no item: nothing is made
    assert store.load(-999).version == 0


def eight_player_item(monkeypatch: pytest.MonkeyPatch, name: str, title: str) -> dict[str, Any]:
    """The stored item of a full table, mid-game, with every name `name` and the table's note
    naming two of them, after the ids of all the messages sent have been remembered."""
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(var, "testing")
    with mock_aws():
        client = Limited(boto3.client("dynamodb", region_name="us-east-1"))
        create_table(client, "games")
        store = DynamoStore(client, "games")
        game = open_table(1_000_000_001, 100.0, name)
        for p in range(2, 9):
            game, _ = apply(game, Join(7_000_000_000 + p, name), 100.0)
        game, _ = apply(game, Start(1_000_000_001, 9), 100.0)
        chat = -1001234567890
        record = Record(chat, game=game, game_id=12, title=names.title(title))
        record.langs = dict.fromkeys(game.ids[:4], "ar")  # half the table reads Arabic
        record.updates = list(range(912_345_678, 912_345_678 + 3 * 12, 3))
        a, b = game.ids[:2]
        challenge = ev.Challenged(a, b, 1, 0, 3, True, b, 12, False, a)
        # The outbox at its fullest: a challenge that ended the game, and the end it names.
        won = ev.Won(b, tuple(reversed(game.ids)))
        record.outbox = [
            Parcel(32 * 13, 912_345_714, 1_764_400_045, (challenge,)),
            Parcel(32 * 13 + 1, 912_345_714, 1_764_400_045, (challenge, won)),
        ]
        record.note = max(
            (announcements.note([challenge], game, lang) or "" for lang in SUPPORTED),
            key=lambda note: len(note.encode()),
        )
        record.next_look, record.expires = 1_764_400_045.125, 1_765_000_000
        save(store, record, new_game=True)
        hands = dict.fromkeys(game.ids, 9_999)
        keep(store, chat, 12, table=123, final=456, hands=hands)
        keep(store, chat, 12, unreachable=frozenset({7_000_000_002}))
        keep(store, chat, 12, marks={32 * 13: True, 32 * 13 + 1: False})
        item: dict[str, Any] = client.get_item(
            TableName="games", Key={"pk": {"S": f"chat#{chat}"}}
        )["Item"]
        return item


def test_an_eight_player_item_fits_one_write_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    item = eight_player_item(monkeypatch, "Abcdefghijklmnop", "A group with a long title indeed")
    assert item_size(item) <= 1024, item_size(item)


def test_names_at_the_length_limit_keep_the_item_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names are cut to NAME_LENGTH characters: 8 such names, two of them in the longest note,
    keep one write unit, of Latin letters (543 B measured, its document compressed) and of the
    widest characters, 4 bytes each in UTF-8 (537 B: they repeat, and compress)."""
    latin = names.person("Abcdefghijklmnopqrstuvwxyz" * 2)
    assert len(latin) == NAME_LENGTH
    assert item_size(eight_player_item(monkeypatch, latin, "G" * 40)) <= 1024
    widest = names.person("\U0001f004" * 40)  # 🀄: 4 bytes in UTF-8, like every emoji
    assert len(widest) == NAME_LENGTH
    assert item_size(eight_player_item(monkeypatch, widest, "\U0001f004" * 40)) <= 1024


@pytest.mark.parametrize("lang", SUPPORTED)
def test_r16_the_item_of_eight_player_games_fits_one_write_unit_at_every_move(lang: str) -> None:
    """The reveal's counters (R16) grow with the game and are all there at its end: the item of
    8 players with 16-letter names, the game's record and every message id beside it, takes one
    write unit after every move (`benchmarks/engine.py --item-games` measures many more)."""
    with dynamodb() as client:
        for seed in range(3):
            sizes = [(item_size(item), game) for game, item in game_items(client, seed, lang)]
            game = sizes[-1][1]
            assert game.phase is Phase.OVER and game.tally, "the counters are kept"
            assert view(game, None, game.updated).stats, "and told"
            assert max(size for size, _ in sizes) <= 1024, max(size for size, _ in sizes)


def test_an_item_written_before_documents_were_compressed_still_reads(client: Any) -> None:
    record = a_record()
    client.put_item(
        TableName="games",
        Item={
            "pk": {"S": f"chat#{CHAT}"},
            "ver": {"N": "3"},
            "doc": {"S": record.document()},
            "gn": {"N": "1"},
        },
    )
    store = DynamoStore(client, "games")
    loaded = store.load(CHAT)
    assert (loaded.version, loaded.game, loaded.langs) == (3, record.game, record.langs)
    loaded.lang = "en"
    save(store, loaded)  # and is written back compressed
    again = store.load(CHAT)
    assert (again.version, again.lang, again.game) == (4, "en", record.game)
    item = client.get_item(TableName="games", Key={"pk": {"S": f"chat#{CHAT}"}})["Item"]
    assert set(item["doc"]) == {"B"}
