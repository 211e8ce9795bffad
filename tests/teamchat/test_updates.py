"""Reading Telegram updates: who spoke where, whether the agent was addressed, stable event IDs."""

from __future__ import annotations

from typing import Any

import pytest
from telegram import Bot

from teamchat.telegram.updates import EDITED_PREFIX, BotIdentity, Incoming, Skipped, normalise
from tests.teamchat.fake_bot_api import TOKEN

ME = BotIdentity(bot_id=99, username="persyn_bot", names=("Persyn Test", "Ada"))
BOT = Bot(TOKEN)


def message(text: str, *, chat_type: str = "group", **extra: Any) -> dict[str, Any]:
    return {
        "message_id": 5,
        "date": 1_796_000_000,
        "chat": {"id": -100 if chat_type != "private" else 7, "type": chat_type},
        "from": {"id": 7, "is_bot": False, "first_name": "Grace", "last_name": "Hopper"},
        "text": text,
        **extra,
    }


def read(body: dict[str, Any], *, kind: str = "message", update_id: int = 1) -> Incoming:
    result = normalise({"update_id": update_id, kind: body}, BOT, ME)
    assert isinstance(result, Incoming), result
    return result


@pytest.mark.parametrize(
    ("body", "addressed"),
    [
        (message("anyone for lunch?", chat_type="private"), True),
        (message("anyone for lunch?"), False),
        (message("lunch, @Persyn_Bot?"), True),
        (message("lunch, @persyn_botanist?"), False),
        (message("what does persyn test think?"), True),
        (message("Adamant about lunch"), False),
        (message("ada, lunch?"), True),
        (
            message(
                "sure",
                reply_to_message=message("hi all")
                | {"from": {"id": 99, "is_bot": True, "first_name": "P"}},
            ),
            True,
        ),
        (message("sure", reply_to_message=message("hi all")), False),
        (
            message(
                "Persyn what?",
                entities=[
                    {
                        "type": "text_mention",
                        "offset": 0,
                        "length": 6,
                        "user": {"id": 99, "is_bot": True, "first_name": "P"},
                    }
                ],
            ),
            True,
        ),
    ],
)
def test_whether_the_agent_was_addressed(body: dict[str, Any], addressed: bool) -> None:
    assert read(body).event.addressed is addressed


def test_the_event_carries_what_the_directory_resolves_by() -> None:
    incoming = read(message("hello"))

    event = incoming.event
    assert (event.channel.service, event.channel.channel) == ("telegram", "-100")
    assert (event.speaker.speaker_id, event.speaker.display_name) == ("7", "Grace Hopper")
    assert event.sent_at is not None and int(event.sent_at.timestamp()) == 1_796_000_000
    assert (incoming.chat_id, incoming.message_id, incoming.update_id) == (-100, 5, 1)


def test_event_ids_are_fixed_per_message_and_per_edit() -> None:
    first = read(message("hello"), update_id=1).event.event_id
    again = read(message("hello"), update_id=2).event.event_id
    edit = read(message("hello!", edit_date=1_796_000_060), kind="edited_message")
    later = read(message("hello!!", edit_date=1_796_000_120), kind="edited_message")

    assert first == again
    assert len({first, edit.event.event_id, later.event.event_id}) == 3
    assert edit.event.text == EDITED_PREFIX + "hello!"
    assert edit.event.event_id > first  # sorts by the time of the edit


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"update_id": 1, "message": message("x" * 100_000)}, "32,000"),
        ({"update_id": 1, "message": message("a\x00b")}, "NUL"),
        ({"update_id": 1, "message": message("   ")}, "no text"),
        (
            {
                "update_id": 1,
                "message": message("mine")
                | {"from": {"id": 99, "is_bot": True, "first_name": "P"}},
            },
            "own",
        ),
        ({"update_id": 1, "message": "not an object"}, "unreadable"),
        ({"update_id": 1, "message": {"message_id": "x", "chat": 5}}, "unreadable"),
        ({"update_id": 1, "channel_post": message("news")}, "not a message"),
        ({"message": message("no id")}, "unreadable"),
    ],
)
def test_what_cannot_become_an_event_is_skipped_with_a_reason(
    raw: dict[str, Any], reason: str
) -> None:
    result = normalise(raw, BOT, ME)

    assert isinstance(result, Skipped)
    assert reason in result.reason
