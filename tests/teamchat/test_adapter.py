"""The ``telegram`` adapter against a fake Bot API: sends, splits, and what each error means."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from activities.channels.adapters.base import DeliveryError, DeliveryOutcome, OutboundMessage
from activities.channels.telegram.adapter import TelegramAdapter, telegram_adapters
from activities.channels.telegram.bot import TelegramSetupError, build_bot, read_token
from activities.channels.telegram.split import TELEGRAM_LIMIT, split_message, utf16_length
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.telegram import TelegramSettings
from store.db import Database
from tests.harness import Stack
from tests.teamchat.conftest import telegram_settings
from tests.teamchat.fake_bot_api import TOKEN, Failure, FakeBotApi


def outbound(text: str, *, chat: str = "42", unprompted: bool = True) -> OutboundMessage:
    return OutboundMessage(
        message_id=new_ulid(),
        agent="tg-agent",
        channel=ChannelRef(service="telegram", channel=chat),
        conversation_id=None,
        text=text,
        unprompted=unprompted,
        created_at=datetime.now(UTC),
    )


async def test_an_unprompted_message_is_sent_to_the_chat(
    adapter: TelegramAdapter, api: FakeBotApi
) -> None:
    receipt = await adapter.deliver(outbound("Your reminder: water the plants."))

    assert receipt.outcome is DeliveryOutcome.DELIVERED
    assert [(m["chat_id"], m["text"], m["reply_to"]) for m in api.sent] == [
        (42, "Your reminder: water the plants.", None)
    ]
    assert receipt.external_id == str(api.sent[0]["message_id"])


async def test_flood_control_is_retried_after_the_wait_telegram_names_then_sent_once(
    adapter: TelegramAdapter, api: FakeBotApi
) -> None:
    api.failures = [
        Failure(429, "Too Many Requests: retry after 3", {"retry_after": 3}),
        Failure(500, "Internal Server Error"),
    ]
    message = outbound("Hello again.")

    with pytest.raises(DeliveryError) as flood:
        await adapter.deliver(message)
    with pytest.raises(DeliveryError) as server:
        await adapter.deliver(message)
    receipt = await adapter.deliver(message)
    again = await adapter.deliver(message)  # a retry after success sends nothing more

    assert flood.value.retryable and flood.value.retry_after == 3
    assert server.value.retryable and server.value.retry_after is None
    assert receipt.outcome is DeliveryOutcome.DELIVERED
    assert again.external_id == receipt.external_id
    assert [m["text"] for m in api.sent] == ["Hello again."]
    assert api.send_attempts == 3


@pytest.mark.parametrize(
    ("chat", "words"),
    [("403", "blocked or removed"), ("-404", "Chat not found"), ("general", "not a chat ID")],
)
async def test_a_refusal_about_the_chat_is_not_retried_and_says_why(
    adapter: TelegramAdapter, api: FakeBotApi, chat: str, words: str
) -> None:
    with pytest.raises(DeliveryError) as refused:
        await adapter.deliver(outbound("Anyone there?", chat=chat))

    assert not refused.value.retryable
    assert words in refused.value.reason
    assert TOKEN not in refused.value.reason
    assert api.sent == []


async def test_a_refused_token_is_named_without_printing_it(api: FakeBotApi, db: Database) -> None:
    wrong = "999:not-the-token"
    adapter = TelegramAdapter(build_bot(telegram_settings(api), wrong), db, token=wrong)
    try:
        with pytest.raises(DeliveryError) as refused:
            await adapter.deliver(outbound("Hi."))
    finally:
        await adapter.aclose()

    assert not refused.value.retryable
    assert "token" in refused.value.reason and wrong not in refused.value.reason


async def test_a_long_message_goes_in_parts_and_a_retry_sends_only_what_is_missing(
    adapter: TelegramAdapter, api: FakeBotApi
) -> None:
    paragraphs = [f"Paragraph {i}:" + " words and more words" * 40 for i in range(12)]
    text = "\n\n".join(paragraphs)  # about 10,000 characters
    api.failures = [Failure(502, "Bad Gateway")]
    message = outbound(text)

    with pytest.raises(DeliveryError) as first:
        await adapter.deliver(message)
    receipt = await adapter.deliver(message)

    assert first.value.retryable
    parts = [m["text"] for m in api.sent]
    assert len(parts) == len(split_message(text)) >= 3
    assert all(utf16_length(part) <= TELEGRAM_LIMIT for part in parts)
    assert "\n\n".join(parts) == text  # cut between paragraphs, nothing lost
    assert receipt.detail == f"{len(parts)} part(s)"


def test_splitting_counts_as_telegram_does_and_never_makes_an_empty_part() -> None:
    emoji = "\U0001f600" * 3000  # 6,000 UTF-16 units in 3,000 characters
    parts = split_message(emoji)
    unbroken = split_message("x" * 9000)

    assert [utf16_length(p) for p in parts] == [4096, 1904]
    assert [len(p) for p in unbroken] == [4096, 4096, 808]
    assert split_message("short") == ["short"]


def test_no_adapter_without_a_bot_and_a_clear_line_for_a_missing_token_file(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    settings = stack.settings(telegram={"agent": "tg-agent", "token_file": "/nonexistent/token"})

    assert telegram_adapters(stack.settings()) == []
    assert telegram_adapters(settings) == []  # the worker still serves the other channels
    assert "cannot read the Telegram token file /nonexistent/token" in caplog.text
    with pytest.raises(TelegramSetupError, match="no Telegram bot token"):
        read_token(TelegramSettings(agent="tg-agent", token=""))
