"""Agent lifecycle use cases against the real Temporal dev server and PostgreSQL."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from contract import names
from schemas.agents import AgentCreate
from store.queries.agents import AgentExistsError
from temporal import schedules_autonomy
from tests.harness import Stack, unique
from usecases import agents


async def test_creating_an_agent_starts_its_inbox_heartbeat_and_maintenance(
    client: Client, stack: Stack
) -> None:
    settings = stack.settings(task_queue=unique("usecases-q"))
    handle = unique("uc")
    spec = AgentCreate(handle=handle, name="Ada", persona="A careful assistant.")

    created = await agents.create_agent(settings=settings, spec=spec)

    assert created.handle == handle
    described = await client.get_workflow_handle(names.agent_workflow_id(handle)).describe()
    assert described.task_queue == settings.task_queue
    heartbeat = await schedules_autonomy.describe(client, names.heartbeat_schedule_id(handle))
    assert heartbeat is not None
    maintenance = await client.get_schedule_handle(names.maintenance_schedule_id(handle)).describe()
    assert maintenance.id == names.maintenance_schedule_id(handle)
    found = await agents.find_agent(settings=settings, handle=handle)
    assert found is not None and found.name == "Ada"
    assert handle in {a.handle for a in await agents.list_agents(settings=settings)}


async def test_a_taken_handle_is_refused_before_anything_starts(stack: Stack) -> None:
    settings = stack.settings(task_queue=unique("usecases-q"))
    handle = unique("uc")
    spec = AgentCreate(handle=handle, name="Ada", persona="A careful assistant.")
    await agents.create_agent(settings=settings, spec=spec)

    with pytest.raises(AgentExistsError):
        await agents.create_agent(settings=settings, spec=spec)


async def test_an_unknown_handle_is_none(stack: Stack) -> None:
    assert await agents.find_agent(settings=stack.settings(), handle=unique("nobody")) is None
