"""Memory administration use cases on the real PostgreSQL: refusals come before any change."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from schemas.events import ChannelRef
from store.db import Database
from tests.harness import Stack, unique
from tests.memory.recall.records import add_channel, add_memory, new_agent
from usecases import memory
from usecases.errors import NotTheAgentsError, UnknownAgentError


@pytest.fixture
async def db(stack: Stack) -> AsyncIterator[Database]:
    database = Database(stack.dsn, pool_size=2)
    yield database
    await database.aclose()


async def _memory(db: Database, summary: str, **extra: object) -> tuple[str, str]:
    agent = await new_agent(db, "ucmem")
    channel = await add_channel(db, agent, ChannelRef(service="terminal", channel="main"))
    record = await add_memory(db, agent=agent, channel_id=channel, summary=summary, **extra)  # type: ignore[arg-type]
    return agent, record


async def test_forgetting_as_another_agent_is_refused_and_changes_nothing(
    stack: Stack, db: Database
) -> None:
    settings = stack.settings()
    owner, record = await _memory(db, "We watched the tide come in.")
    other = await new_agent(db, "ucother")

    with pytest.raises(NotTheAgentsError, match=f"not one of {other}'s memories"):
        await memory.forget(
            settings=settings, record_id=record, agent=other, actor="t", reason=None
        )

    detail = await memory.memory_detail(settings=settings, record_id=record, agent=owner)
    assert detail is not None and detail.record.forgotten_at is None

    result = await memory.forget(
        settings=settings, record_id=record, agent=owner, actor="t", reason="asked"
    )
    assert result is not None and not result.already
    listed = await memory.list_memories(
        settings=settings, agent=owner, channel=None, limit=10, include_forgotten=False
    )
    assert record not in {r.id for r, _ in listed}


async def test_an_unknown_agent_is_named(stack: Stack) -> None:
    nobody = unique("nobody")
    with pytest.raises(UnknownAgentError, match=nobody):
        await memory.cull(settings=stack.settings(), agent=nobody, dry_run=True, actor="t")


async def test_a_dry_run_cull_lists_the_weak_old_memory_and_keeps_it(
    stack: Stack, db: Database
) -> None:
    settings = stack.settings()
    old = datetime.now(UTC) - timedelta(days=settings.memory.cull_after_days + 5)
    agent, record = await _memory(db, "A dull afternoon.", importance=1, created_at=old)

    result = await memory.cull(settings=settings, agent=agent, dry_run=True, actor="t")

    assert result.dry_run and record in {item.record_id for item in result.records}
    assert await memory.memory_detail(settings=settings, record_id=record) is not None
