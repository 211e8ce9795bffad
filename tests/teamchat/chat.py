"""A Telegram chat wired end to end: fake Bot API, worker with the adapter, and the poller."""

from __future__ import annotations

import json
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlmodel import select
from temporalio.client import Client

from activities.channels.telegram.adapter import TelegramAdapter
from activities.channels.telegram.bot import build_bot
from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from schemas.events import CompletionMarker
from store.db import Database
from store.tables import DialogTurnRow
from store.tables.telegram import TelegramInboundRow
from teamchat.telegram.poller import TelegramPoller
from temporal import inbox
from tests.channels.helpers import channel_worker
from tests.harness import Harness, Stack, unique, until
from tests.teamchat.conftest import telegram_settings
from tests.teamchat.fake_bot_api import TOKEN, FakeBotApi, serving
from workers.presence import HomePresence


def verdict(speak: bool, reason: str) -> str:
    return json.dumps({"speak": speak, "reason": reason})


TELL_GRACE = ScriptRule(
    task="respond",
    match="tell Grace",
    after_tool=False,
    tool_calls=[
        ScriptToolCall(
            name="message_contact", arguments={"contact": "Grace", "text": "The report is ready."}
        )
    ],
)
RULES = [
    TELL_GRACE,
    ScriptRule(task="respond", after_tool=True, reply="Done: {tool}"),
    ScriptRule(task="respond", reply="Noted: {last}"),
    # Overheard group chatter: the agent has nothing to add; asked, it answers.
    ScriptRule(
        task="decide", match="NOT addressed", reply=verdict(False, "Nothing to add to their chat.")
    ),
    ScriptRule(task="decide", reply=verdict(True, "I was asked.")),
]


@dataclass
class Chat:
    """The pieces of one wired chat."""

    api: FakeBotApi
    harness: Harness
    poller: TelegramPoller
    agent: str
    db: Database

    async def poll(self) -> int:
        return await self.poller.poll_once()

    async def event_of(self, message_id: int, chat_id: int = 42) -> str:
        """The event ID the poller gave a Telegram message (its latest, for an edit)."""
        async with self.db.session() as session:
            rows = await session.exec(
                select(TelegramInboundRow).where(
                    TelegramInboundRow.agent == self.agent,
                    TelegramInboundRow.chat_id == chat_id,
                    TelegramInboundRow.message_id == message_id,
                )
            )
            return max(row.event_id for row in rows)

    async def marker(self, event_id: str) -> CompletionMarker:
        found: list[CompletionMarker] = []

        async def done() -> bool:
            answer = await inbox.marker(self.harness.client, handle=self.agent, event_id=event_id)
            if answer.marker is not None:
                found.append(answer.marker)
            return bool(found)

        await until(done, timeout=60)
        return found[0]

    async def turn(self, event_id: str) -> DialogTurnRow:
        async with self.db.session() as session:
            row = await session.get(DialogTurnRow, event_id)
        assert row is not None
        return row

    async def sent(self, count: int) -> list[dict[str, object]]:
        """Wait until ``count`` messages reached the chat service; return them."""
        await until(lambda: len(self.api.sent) >= count, timeout=60)
        return self.api.sent


@asynccontextmanager
async def telegram_chat(
    client: Client, stack: Stack, db: Database, *, rules: list[ScriptRule] | None = None
) -> AsyncIterator[Chat]:
    agent = unique("tg")
    # A home of its own: worker beacons other tests left in the shared one would make the
    # submit path wait for this worker's beacon instead of seeing its pollers.
    with tempfile.TemporaryDirectory(prefix="persyn-tg-") as home:
        async with serving() as api:
            config = telegram_settings(api, agent=agent)
            adapter = TelegramAdapter(build_bot(config, TOKEN), db, token=TOKEN)
            async with (
                channel_worker(client, stack, rules=rules or RULES, adapters=[adapter]) as harness,
                build_bot(config, TOKEN) as bot,
            ):
                await harness.create_agent(agent, name="Persyn Test")
                settings = stack.settings(
                    home=Path(home), task_queue=harness.task_queue, telegram=config
                )
                poller = TelegramPoller(
                    bot=bot,
                    token=TOKEN,
                    client=client,
                    db=db,
                    agent=agent,
                    settings=settings,
                    presence=HomePresence(settings),
                )
                await poller.identify()
                # The submit path refuses an event while no worker polls the queue: wait for ours.
                await until(lambda: inbox.has_pollers(client, harness.task_queue), timeout=30)
                yield Chat(api=api, harness=harness, poller=poller, agent=agent, db=db)
            await adapter.aclose()
