"""The shape of a Telegram update: what the router checks and reads before it routes one.

python-telegram-bot does not check field types: a chat id sent as a string would reach the
store as another key, so the router checks the fields it reads (`well_typed`) before any use.
"""

from __future__ import annotations

from telegram import CallbackQuery, ChatMember, ChatMemberRestricted, Message, Update, User

from handlers import names
from handlers.callbacks import Kind, Press


def display_name(user: User) -> str:
    """The user's name as their seat keeps it; "" when nothing visible is left of it.

    Spelled from its parts: python-telegram-bot's `full_name` is None for a `first_name` of ""
    (which the Bot API's types allow), with or without a last name."""
    return names.person(" ".join(part for part in (user.first_name, user.last_name) if part))


def can_send(member: ChatMember) -> bool:
    """Whether the bot, as this member of a group, may still send messages there."""
    if member.status in (ChatMember.LEFT, ChatMember.BANNED):
        return False
    if isinstance(member, ChatMemberRestricted):
        return member.is_member and member.can_send_messages
    return True


def topic_of(message: Message) -> int | None:
    """The forum topic a group message belongs to, or None (a group without topics, or a
    forum's General topic). A reply in a group without topics carries a `message_thread_id`
    too, the replied-to message's: only `is_topic_message` says it is a topic."""
    return message.message_thread_id if message.is_topic_message else None


def replied_to(message: Message) -> int | None:
    """The author of the message `message` replies to, if it is a reply: in a forum topic, a
    message that replies to nothing still names the topic's first message, which is no
    reply's."""
    replied = message.reply_to_message
    if replied is None or replied.forum_topic_created is not None or replied.from_user is None:
        return None
    return replied.from_user.id


def origin_topic(query: CallbackQuery) -> int | None:
    """The forum topic the pressed button's message is in, if it says."""
    message = query.message
    return topic_of(message) if isinstance(message, Message) else None


def well_typed(update: Update) -> bool:
    """Whether the fields the bot reads have Telegram's types (python-telegram-bot does not
    check them): ids are integers below 2**53 (exact in JSON), texts are strings, a press has
    a presser."""

    def is_id(value: object) -> bool:
        return type(value) is int and abs(value) < 1 << 53

    def is_text(value: object, *, optional: bool = True) -> bool:
        return isinstance(value, str) or (optional and value is None)

    query, message = update.callback_query, update.message
    if not is_id(update.update_id):
        return False
    if query is not None and not (
        query.from_user is not None and is_text(query.id, optional=False) and is_text(query.data)
    ):
        return False
    replied = message.reply_to_message if message is not None else None
    if message is not None and not (
        is_text(message.text)
        and (message.migrate_to_chat_id is None or is_id(message.migrate_to_chat_id))
        and (message.sender_chat is None or is_id(message.sender_chat.id))
        and (replied is None or replied.from_user is None or is_id(replied.from_user.id))
    ):
        return False
    messages = [m for m in (message, query.message if query else None) if isinstance(m, Message)]
    if not all(m.message_thread_id is None or is_id(m.message_thread_id) for m in messages):
        return False
    member = update.my_chat_member
    if member is not None and not (
        is_id(member.chat.id) and is_text(member.chat.type, optional=False)
    ):
        return False
    users = [x.from_user for x in (query, message) if x is not None and x.from_user is not None]
    chats = [m for m in (message, query.message if query else None) if m is not None]
    names_ok = all(is_text(u.first_name, optional=False) and is_text(u.last_name) for u in users)
    return (
        names_ok
        and all(is_id(u.id) and is_text(u.language_code) for u in users)
        and all(m.chat is not None and is_id(m.chat.id) and is_id(m.message_id) for m in chats)
        and all(is_text(m.chat.type, optional=False) and is_text(m.chat.title) for m in chats)
    )


def from_right_chat(press: Press, origin: int | None, user: int, topic: int | None) -> bool:
    """Group buttons live in the game's group (and forum topic: a message that says which topic
    it is in must be in the game's); hand buttons in the presser's own chat."""
    if press.kind in (Kind.TOGGLE, Kind.PLAY):
        return origin == user
    in_group = origin == press.chat and (topic is None or topic == press.topic)
    if press.kind is Kind.SHOUT:
        return in_group or origin == user
    return in_group
