"""Live streams over LISTEN/NOTIFY on the real PostgreSQL: listening once the block is entered."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import psycopg

from activities.channels.stream import NotifySink, libpq_dsn
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from store.db import Database
from store.queries.runtime import add_outbox
from tests.harness import Stack
from tests.memory.recall.records import new_agent
from usecases import streams


async def test_token_deltas_arrive_in_order_from_the_gateways_sink(stack: Stack) -> None:
    settings = stack.settings()
    event_id = new_ulid()
    async with streams.token_deltas(settings=settings, event_id=event_id) as deltas:
        async with NotifySink(settings.database_dsn(), event_id, "respond") as sink:
            await sink.delta("Hel")
            await sink.delta("lo")
        got = [await asyncio.wait_for(anext(deltas), 10) for _ in range(2)]
    assert got == ["Hel", "lo"]


async def test_only_the_agents_unprompted_messages_on_the_channel_are_shown(stack: Stack) -> None:
    settings = stack.settings()
    db = Database(stack.dsn, pool_size=1)
    try:
        handle = await new_agent(db, "ucstream")
        here = ChannelRef(service="terminal", channel="console")
        async with streams.unprompted_messages(
            settings=settings, handle=handle, channel=here
        ) as texts:
            # Another agent's notice comes first and is skipped.
            async with await psycopg.AsyncConnection.connect(
                libpq_dsn(stack.dsn), autocommit=True
            ) as conn:
                body = json.dumps({"id": new_ulid(), "agent": "someone", "channel": here.key})
                await conn.execute("SELECT pg_notify('persyn_outbox', %s)", (body,))
            for text, unprompted, channel in [
                ("a reply", False, here.key),
                ("elsewhere", True, "terminal:other"),
                ("I had a thought.", True, here.key),
            ]:
                async with db.session() as session:
                    await add_outbox(
                        session,
                        message_id=new_ulid(),
                        activation_id=new_ulid(),
                        agent=handle,
                        channel_key=channel,
                        conversation_id=None,
                        text_=text,
                        unprompted=unprompted,
                        created_at=datetime.now(UTC),
                    )
            first = await asyncio.wait_for(anext(texts), 10)
        assert first == "I had a thought."
    finally:
        await db.aclose()
