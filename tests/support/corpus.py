"""Hostile and odd webhook inputs, and what the bad-input and failure tests share.

`Scene` drives a game through the webhook with real update JSON and keeps what the checks need:
who plays, which cards challenges turned over (public from then on), the store's state.
`corpus(scene)` builds a few hundred distinct webhook events, none of which may change a game
in progress: forged secrets, bodies that are not updates, wrong types, unknown update kinds,
tampered buttons and refused moves.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from engine import Game, Phase, card_name, mask_of
from engine.cards import rank_of
from handlers import callbacks, render
from handlers.callbacks import Kind, Press
from handlers.dynamo import DynamoStore
from handlers.item import unpack
from handlers.text import SUPPORTED, t
from handlers.webhook import SECRET_HEADER
from infra.harness import GROUP, OTHER_GROUP, SECRET, TOKEN, Person
from infra.harness.bot import Table, open_and_start
from infra.harness.screens import buttons, cards_in_text
from infra.harness.updates import Reply, Updates, event

STRANGER = Person(555, "Eve")
ARABIC = re.compile(r"[\u0600-\u06ff]")
CALLBACK_LIMIT = 200  # characters in a callback answer


def texts(lang: str, key: str, names: list[str] | tuple[str, ...] = ()) -> set[str]:
    """Every wording of `key` in `lang`: plain, and naming each of `names` where it can."""
    found = {t(lang, key)}
    with contextlib.suppress(KeyError):  # not every reason has a wording naming someone
        found |= {t(lang, f"{key}_named", name=name) for name in names}
    return found


class Client:
    """A proxy for the store's boto3 DynamoDB client: records every call, and fails the next
    ones on demand (`fail(operation, error, times)`; `error` an exception, or a callable that
    may make the real call first and then raise, like a response lost after a commit)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.faults: dict[str, list[Any]] = {}

    def fail(self, operation: str, error: Any, times: int = 1) -> None:
        self.faults.setdefault(operation, []).extend([error] * times)

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.client, name)
        if not callable(real) or name.startswith("_") or name in ("exceptions", "meta"):
            return real

        def call(**kwargs: Any) -> Any:
            self.calls.append((name, kwargs))
            pending = self.faults.get(name)
            if pending:
                error = pending.pop(0)
                if isinstance(error, BaseException):
                    raise error
                return error(real, kwargs)
            return real(**kwargs)

        return call


@dataclass
class Snapshot:
    """The stored items, as the checks compare them: what a move writes, version included."""

    items: dict[str, tuple[str, ...]] = field(default_factory=dict)


class Scene:
    """A game played through the webhook, and the checks every bad-input test makes."""

    def __init__(self, table: Table, players: list[Person]) -> None:
        self.table = table
        self.players = players
        self.revealed: set[str] = set()  # turned over by a challenge: public from then on
        store = table.c.store.inner
        assert isinstance(store, DynamoStore)
        self.client = Client(store.client)
        store.client = self.client  # every DynamoDB call is seen, and can be made to fail

    # --- driving --------------------------------------------------------------------------

    def deliver(self, ev: dict[str, Any]) -> dict[str, Any]:
        """The webhook handler on a raw event; its reply performed as Telegram would."""
        return self.table.deliver(ev)

    def start(self) -> None:
        open_and_start(self.table, self.players)

    def by_id(self, player: int | None) -> Person:
        return next(p for p in self.players if p.id == player)

    def awaited(self) -> Person:
        return self.by_id(self.table.game().awaited)

    def hand(self, person: Person) -> set[int]:
        return self.table.hand(person)

    def play_data(self, person: Person, cards: set[int], number: int | None = None) -> str:
        """The data of the Play button a hand shows for `cards` (the selection travels in it)."""
        record = self.table.record()
        game = record.game
        assert game is not None
        moment = game.turns if number is None else number
        press = Press(Kind.PLAY, GROUP, record.game_id, moment, cards=mask_of(cards))
        return callbacks.encode(press)

    def hand_message_id(self, person: Person) -> int:
        message = self.table.record().hand_msgs.get(person.id)
        assert message is not None, f"{person.name} has no hand message"
        return message

    def press_play(self, person: Person, cards: set[int]) -> Reply:
        """Press a Play button carrying `cards` in the person's private hand message, as it
        would read with them selected, without selecting them first (`Driver.play` ticks them
        one by one)."""
        data = self.play_data(person, cards)
        return self.table.press(person, person.id, self.hand_message_id(person), data)

    def press_update(
        self, person: Person, chat: int, message_id: int, data: str, update_id: int | None = None
    ) -> dict[str, Any]:
        """A button press as Telegram delivers it, to post (and post again) as it is."""
        updates = self.table.updates
        query_id = f"q-{person.id}-{updates.next_id()}"
        update_id = updates.next_id() if update_id is None else update_id
        return updates.press(person, chat, message_id, data, update_id=update_id, query_id=query_id)

    def table_screen(self, chat: int = GROUP) -> tuple[str | None, list[str]]:
        """What the group's table message shows: its text and its buttons' data."""
        record = self.table.rt.store.load(chat)
        assert record.table_msg is not None
        message = self.table.tg.message(chat, record.table_msg)
        assert message is not None
        data = [str(b.get("callback_data")) for b in buttons(message)]
        return message.text, data

    def current_table(self, chat: int = GROUP) -> tuple[str | None, list[str]]:
        """What the table message should show now, rendered from the stored game."""
        record = self.table.rt.store.load(chat)
        assert record.game is not None
        screen = render.table(
            record.game,
            record.place,
            record.lang,
            self.table.clock.now,
            record.note,
            not_back=record.not_back(),
        )
        return screen.text, [str(b.data) for row in screen.buttons for b in row]

    def truthful(self, person: Person) -> set[int]:
        rank = self.table.game().rank
        return {c for c in self.hand(person) if rank_of(c) == rank}

    def table_message_id(self) -> int:
        message = self.table.record().table_msg
        assert message is not None
        return message

    def shout_data(self, number: int | None = None) -> str:
        record = self.table.record()
        game = record.game
        assert game is not None
        plays = game.plays if number is None else number
        return callbacks.encode(Press(Kind.SHOUT, GROUP, record.game_id, plays))

    def liar(self, person: Person) -> dict[str, Any]:
        """An update of `person` pressing the table's Liar!, to deliver (and deliver again).
        The cards it would turn over are counted as public from now on."""
        last = self.table.game().last
        assert last is not None
        self.revealed |= {card_name(c) for c in range(52) if last.cards >> c & 1}
        return self.press_update(person, GROUP, self.table_message_id(), self.shout_data())

    def shout(self, person: Person) -> Reply:
        """Liar! from the group's table message; the cards it turns over become public."""
        last = self.table.game().last
        response = self.table.press(person, GROUP, self.table_message_id(), self.shout_data())
        if last is not None and self.table.game().last is None:
            self.revealed |= {card_name(c) for c in range(52) if last.cards >> c & 1}
        return response

    # --- checking -------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Every item in the table: key, version, document, timer and expiry."""
        found = self.client.client.scan(TableName=self.table.rt.settings.table_name)["Items"]
        snap = Snapshot()
        for item in found:
            document = unpack(item["doc"]) if "doc" in item else None
            snap.items[item["pk"]["S"]] = (
                json.dumps(item.get("ver")),
                json.dumps(document),
                *(json.dumps(item.get(key), sort_keys=True) for key in ("due", "expires")),
            )
        return snap

    def group_texts(self) -> list[str]:
        """Every text and button label the bot sent into any group, in order."""
        found = []
        for call in self.table.tg.calls():
            chat = call.chat_id
            if not isinstance(chat, int) or chat > 0:
                continue
            found.append(str(call.params.get("text", "")))
            markup = call.params.get("reply_markup")
            if isinstance(markup, str):
                markup = json.loads(markup)
            if isinstance(markup, dict):
                for row in markup.get("inline_keyboard", []):
                    found += [str(button.get("text", "")) for button in row]
        return found

    def leaks(self) -> list[str]:
        """Group texts naming a card no challenge turned over: a hand shown to the group."""
        return [text for text in self.group_texts() if cards_in_text(text) - self.revealed]

    def held_in_group(self) -> set[str]:
        """Cards someone holds now that a group message names (challenged cards included)."""
        game = self.table.game()
        held = {card_name(c) for mask in game.hands for c in range(52) if mask >> c & 1}
        return held & set().union(*(cards_in_text(text) for text in self.group_texts()))


# --- the corpus ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    event: dict[str, Any]
    status: int  # 401 for a forged secret, 200 for everything else


# Hostile updates carry fixed ids and dates: the corpus keeps one input per distinct event, and
# the update ids it gives them itself.
_HOSTILE = Updates()


def _message(person: Person, text: str, chat: int = GROUP) -> dict[str, Any]:
    message: dict[str, Any] = _HOSTILE.message(person, text, chat, update_id=77)["message"]
    return message


def _query(person: Person, chat: int | None, message_id: int, data: Any) -> dict[str, Any]:
    """A callback query with any `data`; with `chat` None, a press on an inline message."""
    query: dict[str, Any] = _HOSTILE.press(
        person,
        GROUP if chat is None else chat,
        message_id,
        "",
        update_id=0,
        query_id=f"hostile-{person.id}-{message_id}",
    )["callback_query"]
    query["data"] = data
    if chat is None:
        del query["message"]
        query["inline_message_id"] = "AAAA"
    return query


class _Ids:
    def __init__(self) -> None:
        self.next = 900_000

    def __call__(self) -> int:
        self.next += 1
        return self.next


def corpus(scene: Scene) -> list[Case]:
    """Distinct hostile inputs against `scene`'s game, which must be in PLAY with a play made
    by someone other than the awaited player, and not yet challenged."""
    game = scene.table.game()
    assert game.phase is Phase.PLAY and game.last is not None
    cases: list[Case] = []
    seen: set[str] = set()
    for name, ev, status in _all(scene, game, _Ids()):
        if signature(ev) not in seen:  # two templates may make the same input: keep one
            seen.add(signature(ev))
            cases.append(Case(name, ev, status))
    return cases


def _all(scene: Scene, game: Game, ids: _Ids) -> Iterator[tuple[str, dict[str, Any], int]]:
    yield from _forged_secrets(scene, game, ids)
    yield from _bodies(scene, ids)
    yield from _update_shapes(scene, ids)
    yield from _wrong_types(scene, ids)
    yield from _commands(scene, game, ids)
    yield from _presses(scene, game, ids)
    yield from _tampered_data(scene, ids)


def _harmful(scene: Scene, game: Game, ids: _Ids) -> dict[str, dict[str, Any]]:
    """Updates that would change the game if the secret let them through."""
    opener, awaited = scene.players[0], scene.awaited()
    mover = scene.by_id(game.ids[game.last.seat]) if game.last else opener
    shouter = next(p for p in scene.players if p.id != mover.id)
    play = scene.play_data(awaited, {min(scene.hand(awaited))})
    return {
        "stop": {"update_id": ids(), "message": _message(opener, "/stop")},
        "liar": {
            "update_id": ids(),
            "callback_query": _query(shouter, GROUP, scene.table_message_id(), scene.shout_data()),
        },
        "play": {
            "update_id": ids(),
            "callback_query": _query(awaited, awaited.id, scene.hand_message_id(awaited), play),
        },
    }


def _forged_secrets(
    scene: Scene, game: Game, ids: _Ids
) -> Iterator[tuple[str, dict[str, Any], int]]:
    forged: dict[str, tuple[str | None, str]] = {
        "missing": (None, SECRET_HEADER),
        "empty": ("", SECRET_HEADER),
        "forged": ("hunter2", SECRET_HEADER),
        "upper-case value": (SECRET.upper(), SECRET_HEADER),
        "capitalized value": (SECRET.capitalize(), SECRET_HEADER),
        "trailing space": (SECRET + " ", SECRET_HEADER),
        "leading space": (" " + SECRET, SECRET_HEADER),
        "prefix": (SECRET[:-1], SECRET_HEADER),
        "longer": (SECRET + "x", SECRET_HEADER),
        "twice": (SECRET + "," + SECRET, SECRET_HEADER),
        "unicode": ("s3crét-webhook-token", SECRET_HEADER),
        "huge": ("A" * 100_000, SECRET_HEADER),
        "nul": (SECRET + "\x00", SECRET_HEADER),
        "other header": (SECRET, "X-Telegram-Bot-Api-Secret"),
        "bot token": (TOKEN, SECRET_HEADER),
    }
    for what, body in _harmful(scene, game, ids).items():
        for name, (secret, header) in forged.items():
            yield f"secret {name} / {what}", event(body, secret=secret, header=header), 401


def _bodies(scene: Scene, ids: _Ids) -> Iterator[tuple[str, dict[str, Any], int]]:
    """Bodies that are not one JSON object of an update."""
    stop = {"update_id": ids(), "message": _message(scene.players[0], "/stop")}
    text = json.dumps(stop)
    raw = {
        "empty": "",
        "space": "   ",
        "open brace": "{",
        "close brace": "}",
        "single quotes": "{'update_id': 1}",
        "trailing comma": '{"update_id": 1,}',
        "NaN": "NaN",
        "Infinity": "-Infinity",
        "huge exponent": "1e999999",
        "huge integer": "9" * 5000,
        "undefined": "undefined",
        "nul": "\x00",
        "bom": "\ufeff" + text,
        "null": "null",
        "true": "true",
        "zero": "0",
        "string": '"/stop"',
        "empty list": "[]",
        "list of the update": "[" + text + "]",
        "empty object": "{}",
        "two objects": text + text,
        "deep lists": "[" * 100_000 + "]" * 100_000,
        "deep objects": '{"a":' * 100_000 + "1" + "}" * 100_000,
        "deep in an update": '{"update_id": 5, "message": ' + "[" * 100_000,
        "over a megabyte": text[:-1] + ', "pad": "' + "x" * (1 << 20) + '"}',
        "lone surrogate": '{"update_id": 5, "message": {"text": "\\ud800"}}',
    }
    for cut in (2, len(text) // 3, len(text) // 2, len(text) - 1):
        raw[f"cut at {cut}"] = text[:cut]
    for name, body in raw.items():
        yield f"body {name}", event(body, raw=True), 200
    encoded = base64.b64encode(text.encode()).decode()
    b64 = {
        "not base64": ("!!!not base64!!!", True),
        "plain JSON flagged": (text, True),
        "base64 truncated": (encoded[:-3], True),
        "base64 of junk": (base64.b64encode(b"\xff\xfe\x00junk").decode(), True),
        "base64 of non-JSON": (base64.b64encode(b"hello").decode(), True),
        "base64 not flagged": (encoded, False),
        "flag as a string": ("%%%", "true"),
    }
    for name, (body, flag) in b64.items():
        yield f"base64 {name}", event(body, raw=True, b64=flag), 200
    not_strings: dict[str, Any] = {"none": None, "number": 5, "object": stop}
    for name, value in not_strings.items():
        ev = event("", raw=True)
        ev["body"] = value
        yield f"body not a string: {name}", ev, 200


def _update_shapes(scene: Scene, ids: _Ids) -> Iterator[tuple[str, dict[str, Any], int]]:
    """Objects that are not updates the bot acts on."""
    opener, bob = scene.players[0], scene.players[1]
    stop = _message(opener, "/stop")
    shapes: dict[str, dict[str, Any]] = {
        "no update_id": {"message": stop},
        "update_id string": {"update_id": "7", "message": stop},
        "update_id float": {"update_id": 7.5, "message": stop},
        "update_id true": {"update_id": True, "message": stop},
        "update_id null": {"update_id": None, "message": stop},
        "update_id list": {"update_id": [7], "message": stop},
        "update_id 2**64": {"update_id": 2**64, "message": stop},
        "message list": {"update_id": ids(), "message": [stop]},
        "message string": {"update_id": ids(), "message": "/stop"},
        "message number": {"update_id": ids(), "message": 5},
        "message null": {"update_id": ids(), "message": None},
        "message empty": {"update_id": ids(), "message": {}},
        "callback list": {"update_id": ids(), "callback_query": []},
        "callback string": {"update_id": ids(), "callback_query": "x"},
        "callback empty": {"update_id": ids(), "callback_query": {}},
        "only update_id": {"update_id": ids()},
        "edited /stop": {"update_id": ids(), "edited_message": stop},
        "channel post /stop": {"update_id": ids(), "channel_post": stop},
        "edited channel post": {"update_id": ids(), "edited_channel_post": stop},
        "business message": {"update_id": ids(), "business_message": stop},
        "my_chat_member": {
            "update_id": ids(),
            "my_chat_member": {
                "chat": stop["chat"],
                "from": stop["from"],
                "date": 1,
                "old_chat_member": {"status": "member", "user": stop["from"]},
                "new_chat_member": {"status": "left", "user": stop["from"]},
            },
        },
        "poll": {
            "update_id": ids(),
            "poll": {
                "id": "1",
                "question": "Liar?",
                "options": [{"text": "yes", "voter_count": 1}],
                "total_voter_count": 1,
                "is_closed": False,
                "is_anonymous": True,
                "type": "regular",
                "allows_multiple_answers": False,
            },
        },
        "inline_query": {
            "update_id": ids(),
            "inline_query": {"id": "1", "from": stop["from"], "query": "/stop", "offset": ""},
        },
        "chosen_inline_result": {
            "update_id": ids(),
            "chosen_inline_result": {"result_id": "1", "from": stop["from"], "query": "/stop"},
        },
        "chat_join_request": {
            "update_id": ids(),
            "chat_join_request": {
                "chat": stop["chat"],
                "from": stop["from"],
                "user_chat_id": opener.id,
                "date": 1,
            },
        },
        "unknown kind": {"update_id": ids(), "dance": {"steps": 3}},
        "sticker": {"update_id": ids(), "message": {**stop, "text": None, "sticker": {}}},
        "no text": {"update_id": ids(), "message": {k: v for k, v in stop.items() if k != "text"}},
        "empty text": {"update_id": ids(), "message": _message(opener, "")},
        "new members": {
            "update_id": ids(),
            "message": {
                **{k: v for k, v in stop.items() if k not in ("text", "entities")},
                "new_chat_members": [stop["from"]],
            },
        },
        "left member": {
            "update_id": ids(),
            "message": {
                **{k: v for k, v in stop.items() if k not in ("text", "entities")},
                "left_chat_member": stop["from"],
            },
        },
        "no sender": {
            "update_id": ids(),
            "message": {k: v for k, v in stop.items() if k != "from"},
        },
        "press without presser": {
            "update_id": ids(),
            "callback_query": {
                k: v for k, v in _query(bob, GROUP, 1, scene.shout_data()).items() if k != "from"
            },
        },
    }
    for text in ("hello", "Liar!", "stop", " /stop", "\u200f/stop", "/ stop", "//stop", "/"):
        shapes[f"text {text!r}"] = {"update_id": ids(), "message": _message(opener, text)}
    for text in ("/stop@other_bot", "/STOP@OTHER_BOT", "/stop@menteur_test_bot_x", "/stopp"):
        shapes[f"opener says {text}"] = {"update_id": ids(), "message": _message(opener, text)}
    for name, update in shapes.items():
        yield f"shape {name}", event(update), 200


def _wrong_types(scene: Scene, ids: _Ids) -> Iterator[tuple[str, dict[str, Any], int]]:
    """A real update of a move that would apply, with one field of the wrong type."""
    opener = scene.players[0]
    awaited = scene.awaited()
    stop = {"update_id": 0, "message": _message(opener, "/stop")}
    play_data = scene.play_data(awaited, {min(scene.hand(awaited))})
    play = {
        "update_id": 0,
        "callback_query": _query(awaited, awaited.id, scene.hand_message_id(awaited), play_data),
    }
    bad_values: list[Any] = ["x", "-1001234567890", 1.5, True, None, [], {}, 2**64, -(2**70)]
    paths = {
        "stop": (
            stop,
            [
                ("message", "chat", "id"),
                ("message", "from", "id"),
                ("message", "text"),
                ("message", "message_id"),
                ("message", "migrate_to_chat_id"),
                ("message", "chat", "type"),
                ("message", "from", "first_name"),
                ("message", "from", "language_code"),
            ],
        ),
        "play": (
            play,
            [
                ("callback_query", "from", "id"),
                ("callback_query", "data"),
                ("callback_query", "id"),
                ("callback_query", "message", "chat", "id"),
                ("callback_query", "message", "message_id"),
                ("callback_query", "from", "language_code"),
            ],
        ),
    }
    seen: set[str] = set()
    for what, (base, fields) in paths.items():
        for path in fields:
            for value in bad_values:
                update = copy.deepcopy(base)
                update["update_id"] = ids()
                target: Any = update
                for key in path[:-1]:
                    target = target[key]
                if isinstance(target.get(path[-1]), str) and isinstance(value, str):
                    continue  # another string is no wrong type: "x" is a name, a chat type
                if value is None and path[-1] in ("migrate_to_chat_id", "language_code", "data"):
                    continue  # absent: a well-formed update
                target[path[-1]] = value
                name = f"type {what} {'.'.join(path)}={value!r:.20}"
                if name in seen:
                    continue
                seen.add(name)
                yield name, event(update), 200


def _commands(scene: Scene, game: Game, ids: _Ids) -> Iterator[tuple[str, dict[str, Any], int]]:
    """Commands that must be refused or ignored in this game's state."""
    opener, bob, chloe = scene.players
    game_id = scene.table.record().game_id
    said: list[tuple[Person, str, int]] = []
    for text in ("/stop", "/stop now", "/STOP", "/forfeit", "/leave", "/addbot", "/newgame"):
        said.append((STRANGER, text, GROUP))
    for text in ("/leave", "/addbot", "/newgame", "/join", "/start", "/help", "/rules"):
        said.append((bob, text, GROUP))
    said += [(bob, "/stop", GROUP), (chloe, "/stop please", GROUP), (bob, "/hand", GROUP)]
    said += [(STRANGER, "/hand", GROUP), (STRANGER, "/table x", OTHER_GROUP)]
    payloads = [
        "",
        "j",
        "jabc",
        f"j{GROUP}",
        f"j{GROUP}_",
        f"j{GROUP}_x",
        f"j{GROUP}_{game_id} extra",
        f"j{GROUP}_{game_id}_1",
        f"j{GROUP}_0",
        f"j{GROUP}_{game_id + 1}",
        f"j{GROUP}_{'9' * 12}",
        f"j{'9' * 30}_1",
        f"J{GROUP}_{game_id}",
        f"x{GROUP}_{game_id}",
        f"j{OTHER_GROUP}_1",
        "j-0_1",
        "j0_0",
        f"j{GROUP}_-1",
        f"j+{-GROUP}_{game_id}",
        f"j{GROUP}_{game_id}\n",
        "%6A" + str(GROUP),
        "j" + "٣" * 5 + "_1",
    ]
    for payload in payloads:
        said.append((STRANGER, f"/start {payload}".rstrip(" "), STRANGER.id))
    said.append((bob, f"/start j{GROUP}_{game_id}", bob.id))  # seated already, game running
    said.append((STRANGER, f"/start j{GROUP}_{game_id}", STRANGER.id))  # too late to join
    for text in ("/newgame", "/stop", "/forfeit", "/hand", "/leave", "/addbot", "/frobnicate"):
        said.append((opener, text, opener.id))
    for person, text, chat in said:
        update = {"update_id": ids(), "message": _message(person, text, chat)}
        yield f"command {person.name} {text!r} in {chat}", event(update), 200
    # Written as a chat: a channel (through Telegram's Channel_Bot), or the group itself by
    # someone other than Telegram's anonymous-admin user.
    channel = {"id": -1007777777777, "type": "channel", "title": "Card news"}
    channel_bot = {"id": 136817688, "is_bot": True, "first_name": "Channel"}
    group = {"id": GROUP, "type": "supergroup", "title": "Friday cards"}
    acting = ("/stop", "/forfeit", "/newgame", "/addbot", "/language", "/leave", "/hand", "/join")
    for text in acting:
        message = {**_message(opener, text), "sender_chat": channel, "from": channel_bot}
        yield f"channel says {text}", event({"update_id": ids(), "message": message}), 200
        message = {**_message(opener, text), "sender_chat": group}
        yield (
            f"{opener.name} as the group says {text}",
            event({"update_id": ids(), "message": message}),
            200,
        )


def _presses(scene: Scene, game: Game, ids: _Ids) -> Iterator[tuple[str, dict[str, Any], int]]:
    """Button presses the game refuses now."""
    assert game.last is not None
    record = scene.table.record()
    game_id, plays, moment = record.game_id, game.plays, game.turns
    mover = scene.by_id(game.ids[game.last.seat])
    awaited = scene.awaited()
    others = [p for p in scene.players if p.id != awaited.id]
    table_msg = scene.table_message_id()
    held = scene.hand(awaited)
    not_held = set(range(52)) - held

    def press(kind: Kind, number: int | None = None, cards: int = 0, chat: int = GROUP) -> str:
        # A Play names the game's moment; a shout or a decision the play it targets (R10).
        if number is None:
            number = moment if kind is Kind.PLAY else plays
        return callbacks.encode(Press(kind, chat, game_id, number, cards=cards))

    presses: list[tuple[str, Person, int | None, int, Any]] = [
        ("own play", mover, GROUP, table_msg, press(Kind.SHOUT)),
        ("stranger shouts", STRANGER, GROUP, table_msg, press(Kind.SHOUT)),
        ("shout at a later play", awaited, GROUP, table_msg, press(Kind.SHOUT, plays + 1)),
        ("shout at an earlier play", awaited, GROUP, table_msg, press(Kind.SHOUT, plays - 1)),
        ("shout from another game", awaited, GROUP, table_msg, _with_game(press(Kind.SHOUT))),
        ("shout in another group", awaited, OTHER_GROUP, 5, press(Kind.SHOUT)),
        ("shout for another group", awaited, GROUP, table_msg, press(Kind.SHOUT, chat=-5)),
        ("shout in nobody's chat", awaited, None, 0, press(Kind.SHOUT)),
        ("stand while playing", awaited, GROUP, table_msg, press(Kind.STAND)),
        ("stranger stands", STRANGER, GROUP, table_msg, press(Kind.STAND)),
        ("start again", scene.players[0], GROUP, table_msg, press(Kind.START, 0)),
        ("stranger starts", STRANGER, GROUP, table_msg, press(Kind.START, 0)),
        ("leave running", awaited, GROUP, table_msg, press(Kind.LEAVE, 0)),
        ("language past the last", awaited, GROUP, table_msg, press(Kind.LANGUAGE, len(SUPPORTED))),
        ("language 35", STRANGER, GROUP, table_msg, press(Kind.LANGUAGE, 35)),
        ("clock 45", awaited, GROUP, table_msg, press(Kind.CLOCK, 45)),
        ("clock while running", awaited, GROUP, table_msg, press(Kind.CLOCK, 30)),
        ("clock by a stranger", STRANGER, GROUP, table_msg, press(Kind.CLOCK, 0)),
        ("no data", awaited, GROUP, table_msg, None),
        ("empty data", awaited, GROUP, table_msg, ""),
    ]
    hand_msg = scene.hand_message_id(awaited)
    for other in others:
        theirs = mask_of(sorted(scene.hand(other))[:2])
        presses += [
            (
                f"{other.name} plays out of turn",
                other,
                other.id,
                5,
                press(Kind.PLAY, cards=mask_of(sorted(scene.hand(other))[:1])),
            ),
            (
                f"{other.name}'s cards",
                awaited,
                awaited.id,
                hand_msg,
                press(Kind.PLAY, cards=theirs),
            ),
            (
                f"Play in {other.name}'s chat",
                other,
                awaited.id,
                hand_msg,
                press(Kind.PLAY, cards=mask_of(sorted(held)[:1])),
            ),
        ]
    for n in (0, 5):
        chosen = mask_of(sorted(held)[:n])
        presses.append(
            (f"play {n} cards", awaited, awaited.id, hand_msg, press(Kind.PLAY, cards=chosen))
        )
    presses += [
        (
            "play not held",
            awaited,
            awaited.id,
            hand_msg,
            press(Kind.PLAY, cards=mask_of(sorted(not_held)[:1])),
        ),
        (
            "play in the group",
            awaited,
            GROUP,
            table_msg,
            press(Kind.PLAY, cards=mask_of(sorted(held)[:1])),
        ),
        (
            "play at an old turn",
            awaited,
            awaited.id,
            hand_msg,
            press(Kind.PLAY, moment - 1, mask_of(sorted(held)[:1])),
        ),
        (
            "stranger plays",
            STRANGER,
            STRANGER.id,
            1,
            press(Kind.PLAY, cards=mask_of(sorted(held)[:1])),
        ),
        ("toggle in the group", awaited, GROUP, table_msg, _toggle(GROUP, game_id, plays, held)),
        ("toggle in another chat", awaited, others[0].id, 3, _toggle(GROUP, game_id, plays, held)),
    ]
    for name, person, chat, message_id, data in presses:
        update = {"update_id": ids(), "callback_query": _query(person, chat, message_id, data)}
        yield f"press {name}", event(update), 200


def signature(ev: dict[str, Any]) -> str:
    """What makes an input distinct: its headers, flag and body, the update's id left out."""
    body = ev.get("body")
    try:
        parsed = json.loads(body) if isinstance(body, str) and len(body) < 1 << 20 else None
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict) and "update_id" in parsed:
        body = json.dumps({k: v for k, v in parsed.items() if k != "update_id"}, sort_keys=True)
        body += " id:" + type(parsed["update_id"]).__name__
    shown = {k: v for k, v in ev.items() if k != "body"}
    return json.dumps(shown, sort_keys=True, default=str) + repr(body)


def _with_game(data: str) -> str:
    press = callbacks.decode(data)
    return callbacks.encode(Press(press.kind, press.chat, press.game + 1, press.number))


def _toggle(chat: int, game_id: int, plays: int, held: set[int]) -> str:
    press = Press(Kind.TOGGLE, chat, game_id, plays, cards=0, hand=mask_of(held), rank=0)
    return callbacks.encode(press)


def _tampered_data(scene: Scene, ids: _Ids) -> Iterator[tuple[str, dict[str, Any], int]]:
    """The table's Liar! data, changed one character at a time, pressed by a stranger; and
    data that is too long, not canonical, or not this bot's."""
    data = scene.shout_data()
    table_msg = scene.table_message_id()
    variants: dict[str, str] = {}
    for i in range(len(data)):
        for char in "0z-.As k":
            changed = data[:i] + char + data[i + 1 :]
            if changed != data:
                variants.setdefault(changed, f"char {i} -> {char!r}")
    kind, chat, game, number = data.split(".")
    extra = {
        "65 bytes": data + "0" * (65 - len(data)),
        "1 kB": data * 60,
        "66 bytes of Arabic": "ب" * 33,
        "leading zero chat": f"{kind}.-0{chat[1:]}.{game}.{number}",
        "leading zero game": f"{kind}.{chat}.0{game}.{number}",
        "leading zero number": f"{kind}.{chat}.{game}.0{number}",
        "upper case": data.upper(),
        "plus sign": f"{kind}.+{chat[1:]}.{game}.{number}",
        "trailing dot": data + ".",
        "extra field": data + ".1",
        "missing field": f"{kind}.{chat}.{game}",
        "spaces": data.replace(".", " "),
        "json": json.dumps({"kind": kind, "chat": chat}),
        "nul": data + "\x00",
        "newline": data + "\n",
    }
    for name, changed in extra.items():
        variants.setdefault(changed, name)
    for changed, name in variants.items():
        query = _query(STRANGER, GROUP, table_msg, changed)
        update = {"update_id": ids(), "callback_query": query}
        yield f"tampered {name}", event(update), 200


# What a write of a reply alone may change: the update ids applied, the hands the latest of them
# drew (none, for a reply: what its retry draws again), the group sends' times, and the outbox (a
# moment already told is dropped by the next write; a new one comes with a move, which changes
# the game).
BOOKKEEPING = ("u", "dh", "gs", "ox")


def games(scene: Scene) -> dict[str, tuple[Any, ...]]:
    """The stored items as a hostile input must leave them: documents without the replies'
    bookkeeping, timers and expiry (the version moves when a reply is written)."""
    found = {}
    for key, (_, doc, due, expires) in scene.snapshot().items.items():
        text = json.loads(doc)
        if text is None:
            continue  # the chat's flood budget alone: every reply counts in it
        document = json.loads(text)
        kept = {k: v for k, v in document.items() if k not in BOOKKEEPING}
        found[key] = (json.dumps(kept, sort_keys=True), due, expires)
    return found
