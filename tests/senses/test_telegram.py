"""Telegram photos and voice notes reach the agent as pictures and recordings it perceives.

The local stand-in for Telegram's Bot API serves the files; the worker, Temporal and
PostgreSQL are real; the vision model and the transcriber are the local server speaking
OpenAI's protocols. The poller keeps each file under an ID the message fixes, so an update
read again is the same event with the same files.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from telegram import Bot
from temporalio.client import Client

from activities.channels.telegram.adapter import TelegramAdapter
from activities.channels.telegram.bot import build_bot, file_url
from activities.gateway.providers.scripted import ScriptRule
from store.db import Database
from store.tables.telegram import TelegramOffsetRow
from teamchat.telegram.poller import TelegramPoller
from teamchat.telegram.updates import BotIdentity, Incoming, Skipped, normalise
from temporal import inbox
from tests.fakes.provider_server import FakeProviderServer
from tests.harness import Harness, Stack, unique, until
from tests.senses.conftest import OGG, jpeg, senses_worker
from tests.teamchat.conftest import telegram_settings
from tests.teamchat.fake_bot_api import TOKEN, FakeBotApi, serving
from workers.presence import HomePresence


@dataclass
class Chat:
    api: FakeBotApi
    worker: Harness
    poller: TelegramPoller
    agent: str


@asynccontextmanager
async def chat(
    client: Client, stack: Stack, home: Path, fake: FakeProviderServer
) -> AsyncIterator[Chat]:
    agent = unique("tg-senses")
    rules = [ScriptRule(task="respond", reply="Got it: {last}")]
    async with serving() as api:
        config = telegram_settings(api, agent=agent)
        db = Database(stack.dsn)
        adapter = TelegramAdapter(build_bot(config, TOKEN), db, token=TOKEN)
        async with (
            senses_worker(
                client,
                stack,
                home,
                server=fake,
                vision="openai-compatible",
                transcribe=True,
                rules=rules,
                adapters=[adapter],
            ) as worker,
            build_bot(config, TOKEN) as bot,
        ):
            await worker.create_agent(agent)
            settings = worker.deps.settings.model_copy(
                update={"task_queue": worker.task_queue, "telegram": config}
            )
            poller = TelegramPoller(
                bot=bot,
                token=TOKEN,
                client=client,
                db=worker.db,
                agent=agent,
                settings=settings,
                presence=HomePresence(settings),
            )
            await poller.identify()
            await until(lambda: inbox.has_pollers(client, worker.task_queue), timeout=30)
            yield Chat(api=api, worker=worker, poller=poller, agent=agent)
        await adapter.aclose()
        await db.aclose()


async def test_a_photo_and_a_voice_note_are_perceived_and_answered_in_the_chat(
    client: Client, stack: Stack, fake: FakeProviderServer, tmp_path: Path
) -> None:
    fake.transcript = "Meet me at the station at six."
    async with chat(client, stack, tmp_path, fake) as tg:
        photo = tg.api.photo(jpeg(), caption="Our new kite!")
        assert await tg.poller.poll_once() == 1
        [reply] = await until_sent(tg.api, 1)
        assert reply["reply_to"] == photo["message_id"]
        assert "Our new kite!" in reply["text"] and "A red kite over a green hill." in reply["text"]
        # The largest size was fetched and kept, under an ID the message fixes.
        assert tg.api.fetched == ["files/photos-2"]
        [kept] = (tmp_path / "images" / tg.agent).glob("*.jpg")
        assert kept.read_bytes() == jpeg()

        tg.api.voice(OGG)
        assert await tg.poller.poll_once() == 1
        [_, heard] = await until_sent(tg.api, 2)
        assert "(a voice note)" in heard["text"]
        assert "Meet me at the station at six." in heard["text"]
        transcript = fake.requests[-1]
        assert transcript.path == "/v1/audio/transcriptions" and OGG in transcript.body["form"]

        # Read again after a crash before the offset was saved: the same event, nothing twice.
        async with tg.worker.db.session() as session:
            row = await session.get(TelegramOffsetRow, tg.api.bot_id)
            await session.delete(row)
            await session.commit()
        tg.api.push({"update_id": 1000, "message": photo})
        # The photo again, and the voice note Telegram was never told was read.
        assert await tg.poller.poll_once() == 2
        assert len(list((tmp_path / "images" / tg.agent).glob("*.jpg"))) == 1
        assert len(tg.api.sent) == 2
        respond = [r for r in tg.worker.provider.requests if r.task.value == "respond"]
        assert len(respond) == 2


async def test_a_photo_too_large_or_not_a_picture_is_said_not_dropped(
    client: Client, stack: Stack, fake: FakeProviderServer, tmp_path: Path
) -> None:
    async with chat(client, stack, tmp_path, fake) as tg:
        tg.api.photo(b"%PDF-1.7 not a photo at all", caption="see attached")
        assert await tg.poller.poll_once() == 1
        [reply] = await until_sent(tg.api, 1)
        assert "[picture sent, not kept: not a PNG, JPEG or WebP picture" in reply["text"]
        assert not (tmp_path / "images" / tg.agent).exists()


async def until_sent(api: FakeBotApi, count: int) -> list[dict[str, Any]]:
    await until(lambda: len(api.sent) >= count, timeout=60)
    return api.sent


def test_files_are_served_beside_the_methods() -> None:
    assert file_url("https://api.telegram.org/bot") == "https://api.telegram.org/file/bot"
    assert file_url("http://127.0.0.1:8081/bot/") == "http://127.0.0.1:8081/file/bot"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
PHOTO_SIZE = st.fixed_dictionaries(
    {
        "file_id": st.text(),
        "file_unique_id": st.text(),
        "width": st.integers(),
        "height": st.integers(),
    },
    optional={"file_size": st.integers()},
)


@settings(max_examples=150, deadline=None)
@given(
    photo=st.lists(PHOTO_SIZE, max_size=3) | JSON,
    voice=st.none() | JSON,
    caption=st.none() | st.text(),
)
def test_any_photo_or_voice_update_is_read_or_skipped_never_raises(
    photo: Any, voice: Any, caption: str | None
) -> None:
    body: dict[str, Any] = {
        "message_id": 5,
        "date": 1_796_000_000,
        "chat": {"id": 7, "type": "private"},
        "from": {"id": 7, "is_bot": False, "first_name": "Grace"},
        "photo": photo,
    }
    if voice is not None:
        body["voice"] = voice
    if caption is not None:
        body["caption"] = caption
    me = BotIdentity(bot_id=99, username="persyn_bot")
    result = normalise({"update_id": 1, "message": body}, Bot(TOKEN), me)
    assert isinstance(result, Incoming | Skipped)
    if isinstance(result, Incoming):
        assert result.event.text.strip()
        assert result.media or (caption or "").strip()  # a caption alone is a message
        assert all(ref.kind in ("image", "audio") for ref in result.media)
