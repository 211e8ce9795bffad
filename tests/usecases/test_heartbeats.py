"""Heartbeat operator actions as use cases, on the real Temporal dev server and PostgreSQL."""

from __future__ import annotations

import pytest

from schemas.agents import AgentCreate
from schemas.autonomy import HeartbeatState
from tests.harness import Stack, unique
from usecases import agents, heartbeats
from usecases.errors import UnknownAgentError


async def test_a_deleted_heartbeat_stays_deleted_until_restored(stack: Stack) -> None:
    settings = stack.settings(task_queue=unique("usecases-q"))
    handle = unique("uchb")
    spec = AgentCreate(handle=handle, name="Ada", persona="A careful assistant.")
    await agents.create_agent(settings=settings, spec=spec)

    deleted = await heartbeats.delete_heartbeat(settings=settings, handle=handle)
    assert deleted.record is not None and deleted.record.state is HeartbeatState.DELETED
    still = await heartbeats.heartbeat_status(settings=settings, handle=handle)
    assert still.record is not None and still.record.state is HeartbeatState.DELETED

    restored = await heartbeats.restore_heartbeat(settings=settings, handle=handle)
    assert restored.record is not None and restored.record.state is HeartbeatState.ACTIVE
    assert restored.scheduled


async def test_an_unknown_agent_has_no_heartbeat_to_touch(stack: Stack) -> None:
    nobody = unique("nobody")
    with pytest.raises(UnknownAgentError, match=nobody):
        await heartbeats.delete_heartbeat(settings=stack.settings(), handle=nobody)
