"""Team-chat fixtures: a fake Telegram Bot API and the Telegram side wired to it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.channels.telegram.adapter import TelegramAdapter
from activities.channels.telegram.bot import build_bot
from schemas.telegram import TelegramSettings
from store.db import Database
from store.embedded import EmbeddedPostgres
from tests.teamchat.fake_bot_api import TOKEN, FakeBotApi, serving


@pytest.fixture
async def api() -> AsyncIterator[FakeBotApi]:
    async with serving() as running:
        yield running


@pytest.fixture(scope="session")
async def db(postgres: EmbeddedPostgres) -> AsyncIterator[Database]:
    database = Database(postgres.dsn, pool_size=4)
    yield database
    await database.aclose()


def telegram_settings(api: FakeBotApi, *, agent: str = "tg-agent") -> TelegramSettings:
    return TelegramSettings(agent=agent, token=TOKEN, base_url=api.base_url, poll_timeout_seconds=1)


@pytest.fixture
async def adapter(api: FakeBotApi, db: Database) -> AsyncIterator[TelegramAdapter]:
    adapter = TelegramAdapter(build_bot(telegram_settings(api), TOKEN), db, token=TOKEN)
    yield adapter
    await adapter.aclose()
