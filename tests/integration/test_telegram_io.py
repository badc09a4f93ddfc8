"""Delivering requests through python-telegram-bot to the fake Bot API server.

Each test runs its coroutines on one event loop, the way a Lambda container does, so the bot's
keep-alive connections are reused between calls as in production.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import telegram

from handlers.questions import Standing, is_admin, standing, username
from handlers.screens import (
    Answer,
    Button,
    Edit,
    EditButtons,
    HandSlot,
    MomentSlot,
    Request,
    Screen,
    Send,
    TableSlot,
)
from handlers.telegram_io import (
    TRANSIENT_REDRAW,
    Delivery,
    close_bot,
    deliver,
    make_bot,
    perform_reply,
    webhook_reply,
)
from infra.fake_telegram import (
    BOT_USERNAME,
    FakeTelegram,
    api_error,
    bad_request,
    blocked_by_user,
    cant_initiate,
    chat_migrated,
    delay,
    server_error,
    together,
    too_many_requests,
)
from infra.harness import GROUP, TOKEN, Run

ALICE = 4242
BOB = 4343


class FakeSleep:
    """Records the waits asked for instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


pytestmark = pytest.mark.usefixtures("ptb_timedelta")


@pytest.fixture
def bot(tg: FakeTelegram, run: Run) -> Iterator[telegram.Bot]:
    bot = make_bot(TOKEN, tg.base_url)
    yield bot
    run(close_bot(bot))


@pytest.fixture
def sleep() -> FakeSleep:
    return FakeSleep()


@pytest.fixture
def send(bot: telegram.Bot, run: Run, sleep: FakeSleep) -> Callable[..., Delivery]:
    """deliver() on the test's loop, with the fake sleep."""

    def send(*requests: Request, max_wait: float = 3.0) -> Delivery:
        result: Delivery = run(deliver(bot, requests, max_wait=max_wait, sleep=sleep))
        return result

    return send


def table(text: str = "table", *data: str) -> Screen:
    return Screen(text, (tuple(Button(d.upper(), d) for d in data),) if data else ())


def inline(*rows: list[dict[str, str]]) -> dict[str, Any]:
    return {"inline_keyboard": list(rows)}


# -- what arrives --------------------------------------------------------------------------------


def test_requests_arrive_with_their_params_and_keyboards(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    screen = Screen(
        "Game 1",
        (
            (Button("Join", "j.1"), Button("Start", "s.1")),
            (Button("Rules", url="https://example.test/rules"),),
        ),
    )
    done = send(Send(GROUP, screen, remember=TableSlot()), Send(ALICE, Screen("no keys")))

    assert done == Delivery(remembered={TableSlot(): 1}, requests=2)
    [group_call] = tg.calls("sendMessage", chat_id=GROUP)
    assert group_call.params == {
        "chat_id": GROUP,
        "text": "Game 1",
        "reply_markup": inline(
            [{"text": "Join", "callback_data": "j.1"}, {"text": "Start", "callback_data": "s.1"}],
            [{"text": "Rules", "url": "https://example.test/rules"}],
        ),
        "link_preview_options": {"is_disabled": True},
    }
    [private_call] = tg.calls("sendMessage", chat_id=ALICE)
    assert "reply_markup" not in private_call.params

    done = send(
        Answer("cb-1", text="Joined", url="https://t.me/x?start=g1"),
        Edit(GROUP, 1, Screen("Game 1: started")),  # no buttons: the keyboard goes
        EditButtons(ALICE, 1, ((Button("A♠", "t.1"),),)),
    )

    assert done == Delivery(requests=3)
    [answer] = tg.calls("answerCallbackQuery")
    assert answer.params == {
        "callback_query_id": "cb-1",
        "text": "Joined",
        "url": "https://t.me/x?start=g1",
    }
    [edit] = tg.calls("editMessageText")
    assert edit.params == {
        "chat_id": GROUP,
        "message_id": 1,
        "text": "Game 1: started",
        "link_preview_options": {"is_disabled": True},
    }
    stored = tg.message(GROUP, 1)
    assert stored is not None
    assert (stored.text, stored.reply_markup) == ("Game 1: started", None)
    [buttons] = tg.calls("editMessageReplyMarkup")
    assert buttons.params == {
        "chat_id": ALICE,
        "message_id": 1,
        "reply_markup": inline([{"text": "A♠", "callback_data": "t.1"}]),
    }


def test_a_plain_answer_sends_no_optional_fields(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    send(Answer("cb-2"))
    assert tg.calls("answerCallbackQuery")[0].params == {"callback_query_id": "cb-2"}


def test_requests_into_one_chat_keep_their_order(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    tg.fail_next("sendMessage", chat_id=GROUP, error=delay(0.2))  # the first one is slow
    done = send(
        Send(GROUP, table("one"), remember=MomentSlot(1)),
        Send(GROUP, table("two"), remember=MomentSlot(2)),
        Edit(GROUP, 1, table("one, edited")),
    )
    assert tg.messages_to(GROUP) == ["one", "two", "one, edited"]
    assert done.remembered == {MomentSlot(1): 1, MomentSlot(2): 2}


def test_requests_into_different_chats_run_concurrently(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    # Each send is answered only once all three are in flight: sent one after another, they
    # would break the gate and fail.
    gate = together(3)
    for chat in (GROUP, ALICE, BOB):
        tg.fail_next("sendMessage", chat_id=chat, error=gate)
    done = send(Send(GROUP, table("g")), Send(ALICE, table("a")), Send(BOB, table("b")))

    assert done.failed == []
    assert [tg.messages_to(chat) for chat in (GROUP, ALICE, BOB)] == [["g"], ["a"], ["b"]]
    assert tg.connections_accepted == 3  # the pool opened a connection per chat


def test_one_event_loop_serves_many_deliveries_on_kept_alive_connections(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    for n in range(5):
        send(Send(GROUP, table(f"message {n}")))
    assert tg.messages_to(GROUP) == [f"message {n}" for n in range(5)]
    assert tg.connections_accepted == 1


# -- what Telegram refuses --------------------------------------------------------------------


def test_not_modified_is_success_without_a_retry(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    send(Send(GROUP, table("same", "x")))
    done = send(Edit(GROUP, 1, table("same", "x")), EditButtons(GROUP, 1, table("", "x").buttons))
    assert done == Delivery(requests=2)
    assert [c.status for c in tg.calls(chat_id=GROUP)] == [200, 400, 400]


@pytest.mark.parametrize("timedelta", [False, True], ids=["int", "timedelta"])
@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
def test_a_short_flood_wait_is_slept_then_retried_once(
    tg: FakeTelegram,
    send: Callable[..., Delivery],
    sleep: FakeSleep,
    monkeypatch: pytest.MonkeyPatch,
    timedelta: bool,
) -> None:
    # PTB gives retry_after as an int, or as a timedelta once PTB_TIMEDELTA opts in to v23.
    if timedelta:
        monkeypatch.setenv("PTB_TIMEDELTA", "true")
    else:
        monkeypatch.delenv("PTB_TIMEDELTA", raising=False)
    tg.fail_next("sendMessage", chat_id=GROUP, error=too_many_requests(2))

    done = send(Send(GROUP, table("hello"), remember=TableSlot()))

    assert sleep.waits == [2.0]
    assert done == Delivery(remembered={TableSlot(): 1}, requests=2)
    assert [c.status for c in tg.calls("sendMessage")] == [429, 200]


def test_a_flood_wait_is_retried_only_once(
    tg: FakeTelegram, send: Callable[..., Delivery], sleep: FakeSleep
) -> None:
    tg.fail_next("editMessageText", chat_id=GROUP, error=too_many_requests(1))
    tg.fail_next("editMessageText", chat_id=GROUP, error=too_many_requests(1))

    done = send(Edit(GROUP, 5, table("x")))

    assert sleep.waits == [1.0]  # no pointless wait before giving up
    assert done.requests == 2
    assert len(done.failed) == 1


def test_a_long_flood_wait_is_given_up(
    tg: FakeTelegram, send: Callable[..., Delivery], sleep: FakeSleep
) -> None:
    tg.fail_next("sendMessage", chat_id=GROUP, error=too_many_requests(30))

    done = send(Send(GROUP, table("hello"), remember=TableSlot()), Send(ALICE, table("hand")))

    assert sleep.waits == []
    assert done.remembered == {}
    assert done.requests == 2
    [failure] = done.failed
    assert "sendMessage" in failure
    assert str(GROUP) in failure
    assert tg.messages_to(ALICE) == ["hand"]


def test_buttons_that_wait_for_a_replacement_go_only_once_it_arrived(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    old = Send(GROUP, table("old table", "x.1"), remember=HandSlot(7))
    assert send(old).remembered == {HandSlot(7): 1}
    tg.fail_next("sendMessage", chat_id=GROUP, error=too_many_requests(30))
    handover = (
        Send(GROUP, table("new table", "x.2"), remember=TableSlot()),
        EditButtons(GROUP, 1, (), after=TableSlot()),
    )
    done = send(*handover)  # the new table meets a flood limit: the old one keeps its buttons
    assert done.remembered == {} and tg.calls("editMessageReplyMarkup") == []
    stored = tg.message(GROUP, 1)
    assert stored is not None and stored.reply_markup is not None

    done = send(*handover)
    assert done.remembered == {TableSlot(): 2}
    stored = tg.message(GROUP, 1)
    assert stored is not None and stored.reply_markup is None


def test_screens_given_up_for_a_while_are_owed_a_redraw_after_the_longest_wait(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    tg.fail_next("editMessageText", chat_id=GROUP, error=too_many_requests(30))
    tg.fail_next("editMessageText", chat_id=ALICE, error=too_many_requests(12))
    tg.fail_next("answerCallbackQuery", error=too_many_requests(50))  # no screen: owes nothing
    done = send(Answer("cb"), Edit(GROUP, 1, table("t")), Edit(ALICE, 2, table("h")))
    assert done.owed == 30.0
    tg.fail_next("sendMessage", chat_id=GROUP, error=server_error(502))
    assert send(Send(GROUP, table("moment"))).owed == TRANSIENT_REDRAW
    tg.fail_next("editMessageText", chat_id=GROUP, error=too_many_requests(2))
    assert send(Edit(GROUP, 1, table("t2"))).owed is None, "waited out: nothing owed"
    tg.fail_next("editMessageText", chat_id=GROUP, error=bad_request("message is not modified"))
    assert send(Edit(GROUP, 1, table("t2"))).owed is None


def test_a_blocked_player_is_unreachable_and_the_others_are_served(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    tg.block(ALICE)
    tg.fail_next("sendMessage", chat_id=BOB, error=cant_initiate())

    done = send(
        Send(ALICE, table("hand A"), remember=HandSlot(ALICE)),
        Edit(ALICE, 3, table("hand A again")),  # not even tried: the chat answered 403
        Send(BOB, table("hand B")),
        Send(GROUP, table("table"), remember=TableSlot()),
    )

    assert done.unreachable == {ALICE, BOB}
    assert done.kicked == set()
    assert done.remembered == {TableSlot(): 1}
    assert tg.messages_to(GROUP) == ["table"]
    assert len(tg.calls(chat_id=ALICE)) == 1
    assert done.requests == 3
    assert len(done.failed) == 3


def test_a_group_that_removed_the_bot_is_kicked(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    tg.fail_next(
        "sendMessage",
        chat_id=GROUP,
        error=api_error(403, "Forbidden: bot was kicked from the group"),
    )
    done = send(Send(GROUP, table()), Send(ALICE, table("hand")))
    assert (done.kicked, done.unreachable) == ({GROUP}, set())
    assert tg.messages_to(ALICE) == ["hand"]


def test_a_migrated_group_is_followed_to_its_new_id(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    old, new = -55, -1009
    tg.fail_always(None, chat_id=old, error=chat_migrated(new))

    done = send(Send(old, table("table"), remember=TableSlot()), Edit(old, 7, table("edited")))

    assert done.migrated == {old: new}
    assert done.remembered == {TableSlot(): 1}
    assert done.failed == []
    assert tg.messages_to(new) == ["table", "edited"]
    assert done.requests == 3  # the failed send, its retry, and the edit sent straight to new


def test_an_edit_of_a_deleted_message_sends_a_new_one_when_remembered(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    for _ in range(2):
        tg.fail_next(
            "editMessageText", chat_id=GROUP, error=bad_request("message to edit not found")
        )

    done = send(Edit(GROUP, 7, table("table", "x"), remember=TableSlot()))

    assert done == Delivery(remembered={TableSlot(): 1}, requests=2)
    [new] = tg.calls("sendMessage", chat_id=GROUP)
    assert new.params["text"] == "table"
    assert new.params["reply_markup"] == inline([{"text": "X", "callback_data": "x"}])

    # Without a name to remember it by, the edit is given up.
    done = send(Edit(GROUP, 7, table("table")))
    assert done.requests == 1
    assert done.remembered == {}
    assert len(done.failed) == 1
    assert len(tg.calls("sendMessage")) == 1


def test_buttons_of_a_message_that_cannot_be_edited_are_given_up(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    tg.fail_next("editMessageReplyMarkup", error=bad_request("message can't be edited"))
    done = send(EditButtons(ALICE, 3, ()))
    assert (done.requests, len(done.failed), tg.calls("sendMessage")) == (1, 1, [])


def test_a_send_that_times_out_is_not_retried(tg: FakeTelegram, run: Run) -> None:
    bot = make_bot(TOKEN, tg.base_url, read_timeout=0.2)
    tg.fail_next("sendMessage", chat_id=GROUP, error=delay(1.0))

    done = run(deliver(bot, [Send(GROUP, table("slow"), remember=TableSlot())]))

    assert done.requests == 1
    assert done.remembered == {}
    assert len(done.failed) == 1
    # It arrived all the same, once: a retry would have doubled it.
    assert tg.messages_to(GROUP) == ["slow"]
    run(close_bot(bot))


def test_an_edit_that_times_out_is_retried(tg: FakeTelegram, run: Run) -> None:
    bot = make_bot(TOKEN, tg.base_url, read_timeout=0.2)
    # Far beyond the read timeout, however slowly the machine runs the client.
    tg.fail_next("editMessageText", chat_id=GROUP, error=delay(10.0))

    done = run(deliver(bot, [Edit(GROUP, 1, table("edited"))]))

    # The slow edit took effect, so the retry finds nothing to change: a success.
    assert done == Delivery(requests=2)
    assert [c.status for c in tg.calls("editMessageText")] == [200, 400]
    run(close_bot(bot))


def test_a_server_error_retries_an_answer_but_not_a_send(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    tg.fail_next("answerCallbackQuery", error=server_error(502))
    tg.fail_next("sendMessage", error=server_error(500))

    done = send(Answer("cb-3", text="ok"), Send(GROUP, table()))

    assert [c.status for c in tg.calls("answerCallbackQuery")] == [502, 200]
    assert [c.status for c in tg.calls("sendMessage")] == [500]
    assert done.requests == 3
    assert len(done.failed) == 1


def test_other_errors_are_given_up_and_never_raised(
    tg: FakeTelegram, send: Callable[..., Delivery]
) -> None:
    tg.fail_next("sendMessage", chat_id=GROUP, error=bad_request("BUTTON_DATA_INVALID"))
    tg.fail_next("answerCallbackQuery", error=bad_request("query is too old"))
    tg.fail_next("answerCallbackQuery", error=blocked_by_user())  # 403 without a chat

    done = send(Send(GROUP, table()), Send(GROUP, table("next")), Answer("a"), Answer("b"))

    assert len(done.failed) == 3
    assert done.unreachable == set()
    assert tg.messages_to(GROUP) == ["next"]
    assert done.requests == 4


# -- the webhook reply, and questions ---------------------------------------------------------


def test_webhook_reply_shape() -> None:
    assert webhook_reply(Answer("cb-9")) == {
        "method": "answerCallbackQuery",
        "callback_query_id": "cb-9",
    }
    assert webhook_reply(Answer("cb-9", text="Not your turn", url="https://t.me/b")) == {
        "method": "answerCallbackQuery",
        "callback_query_id": "cb-9",
        "text": "Not your turn",
        "url": "https://t.me/b",
    }


def test_perform_reply_makes_the_call_the_webhook_reply_describes(
    tg: FakeTelegram, bot: telegram.Bot, run: Run
) -> None:
    run(perform_reply(bot, webhook_reply(Answer("cb-7", text="Joined"))))
    [call] = tg.calls("answerCallbackQuery")
    assert call.params == {"callback_query_id": "cb-7", "text": "Joined"}

    tg.fail_next("answerCallbackQuery", error=bad_request("query is too old"))
    run(perform_reply(bot, webhook_reply(Answer("cb-8"))))  # logged, not raised

    # Any other body is not one of this bot's webhook replies: a bug, said loudly.
    with pytest.raises(ValueError, match="sendMessage"):
        run(perform_reply(bot, {"method": "sendMessage", "chat_id": GROUP, "text": "hi"}))
    assert len(tg.calls()) == 2


def test_is_admin(tg: FakeTelegram, bot: telegram.Bot, run: Run) -> None:
    tg.admins.add((GROUP, ALICE))
    tg.owners.add((GROUP, BOB))
    assert run(is_admin(bot, GROUP, ALICE))
    assert run(is_admin(bot, GROUP, BOB))
    assert not run(is_admin(bot, GROUP, 77))
    assert not run(is_admin(bot, -5, ALICE))
    tg.fail_next("getChatMember", error=bad_request("chat not found"))
    assert not run(is_admin(bot, GROUP, ALICE))


def test_standing_tells_admins_members_and_outsiders_and_never_raises(
    tg: FakeTelegram, bot: telegram.Bot, run: Run
) -> None:
    tg.owners.add((GROUP, 1))
    tg.admins.add((GROUP, 2))
    tg.set_status(GROUP, 4, "restricted", is_member=True)  # muted, still in the group
    tg.set_status(GROUP, 5, "restricted", is_member=False)  # restricted, then left
    tg.set_status(GROUP, 6, "left")
    tg.set_status(GROUP, 7, "kicked")  # banned
    expected = {
        1: Standing.ADMIN,
        2: Standing.ADMIN,
        3: Standing.MEMBER,
        4: Standing.MEMBER,
        5: Standing.OUTSIDER,
        6: Standing.OUTSIDER,
        7: Standing.OUTSIDER,
    }
    for user, where in expected.items():
        assert run(standing(bot, GROUP, user)) is where, user
    tg.fail_next("getChatMember", error=bad_request("chat not found"))
    assert run(standing(bot, GROUP, 3)) is Standing.OUTSIDER
    tg.fail_next("getChatMember", error=api_error(403, "Forbidden: bot was kicked from the group"))
    assert run(standing(bot, GROUP, 3)) is Standing.OUTSIDER
    for error in (server_error(502), too_many_requests(5)):
        tg.fail_next("getChatMember", error=error)
        assert run(standing(bot, GROUP, 2)) is Standing.UNKNOWN
    assert len(tg.calls("getChatMember")) == len(expected) + 4, "one request each"


def test_username_asks_telegram_once(tg: FakeTelegram, run: Run) -> None:
    # A token of its own: the cache outlives bots (and tests) on purpose.
    first, second = make_bot("777:username", tg.base_url), make_bot("777:username", tg.base_url)
    assert run(username(first)) == BOT_USERNAME
    assert run(username(second)) == BOT_USERNAME
    assert len(tg.calls("getMe")) == 1
    run(close_bot(first))
    run(close_bot(second))
