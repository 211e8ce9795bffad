"""The web channel's one listener, on the real PostgreSQL: fan-out, a slow reader, a lost link.

Each stream is a subscription to the process's one LISTEN connection. A subscriber gets what
is sent on its agent's channel and nothing else; one that falls behind is closed without
holding the others up; when the connection is lost, every subscriber is closed (its reader
resumes by message ID) and the listener reconnects by itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import psycopg

from activities.channels.stream import libpq_dsn
from schemas.ids import new_ulid
from store.queries.runtime import OUTBOX_CHANNEL
from tests.harness import Stack, until
from usecases.listener import (
    APPLICATION_NAME,
    ChannelListener,
    ListenerUnavailableError,
    Notice,
    Sent,
)


async def notify(stack: Stack, agent: str, channel: str, message_id: str) -> None:
    """What ``channels.transmit`` sends once it has written an outbox row."""
    payload = json.dumps({"agent": agent, "channel": channel, "id": message_id})
    async with await psycopg.AsyncConnection.connect(libpq_dsn(stack.dsn), autocommit=True) as c:
        await c.execute("SELECT pg_notify(%s, %s)", (OUTBOX_CHANNEL, payload))


async def next_notice(notices: AsyncIterator[Notice]) -> Notice:
    return await asyncio.wait_for(anext(notices), 10)


async def test_each_subscriber_gets_its_own_channel_and_a_slow_one_is_let_go(
    stack: Stack,
) -> None:
    async with ChannelListener(libpq_dsn(stack.dsn), queue_size=2) as listener:
        with (
            listener.subscribe(agent="ada", channel_key="web:A:support") as reader,
            listener.subscribe(agent="ada", channel_key="web:A:support") as slow,
            listener.subscribe(agent="ada", channel_key="web:B:support") as other,
        ):
            sent = [new_ulid() for _ in range(3)]
            await notify(stack, "ada", "web:B:support", new_ulid())
            for message_id in sent:
                await notify(stack, "ada", "web:A:support", message_id)
                # The reader keeps up; the slow one reads nothing.
                assert await next_notice(reader) == Sent(message_id)
            await until(lambda: slow.closed_because is not None)
            assert [notice async for notice in slow] == []
            assert other.closed_because is None and reader.closed_because is None
            assert isinstance(await next_notice(other), Sent)


async def test_a_lost_connection_closes_the_subscribers_and_the_listener_comes_back(
    stack: Stack,
) -> None:
    async with ChannelListener(libpq_dsn(stack.dsn)) as listener:
        with listener.subscribe(agent="ada", channel_key="web:A:support") as before:
            async with await psycopg.AsyncConnection.connect(
                libpq_dsn(stack.dsn), autocommit=True
            ) as admin:
                await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = %s",
                    (APPLICATION_NAME,),
                )
            assert [notice async for notice in before] == []
            assert before.closed_because is not None and "Last-Event-ID" in before.closed_because
        await until(lambda: listener.ready, timeout=30)
        with listener.subscribe(agent="ada", channel_key="web:A:support") as after:
            message_id = new_ulid()
            await notify(stack, "ada", "web:A:support", message_id)
            assert await next_notice(after) == Sent(message_id)


async def test_no_subscription_while_the_database_is_away() -> None:
    # Nothing listens on this port: the listener keeps trying, and refuses subscribers.
    away = ChannelListener("postgresql://postgres@127.0.0.1:9/none", startup_wait_s=0.5)
    async with away as listener:
        assert not listener.ready
        try:
            with listener.subscribe(agent="ada", channel_key="web:A:support"):
                raise AssertionError("subscribed without a connection")
        except ListenerUnavailableError as err:
            assert "unavailable" in str(err)
