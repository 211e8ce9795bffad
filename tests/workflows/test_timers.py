"""Timers on Temporal's time-skipping server: conversations close when idle."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import select
from temporalio.testing import WorkflowEnvironment

from activities.gateway.providers.scripted import ScriptedProvider
from contract import names
from schemas.agents import AgentStatus, AgentStatusQuery
from schemas.conversation import WindowAnswer, WindowQuery
from schemas.models import ProviderName
from store.tables import Conversation
from temporal import inbox
from tests.harness import Harness, Stack, close_dependencies, dependencies, event, unique
from workers.build import build_worker
from workflows.conversation import ConversationWorkflow


async def test_an_idle_conversation_closes_and_the_next_message_opens_a_new_one(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    settings = stack.settings()
    deps = dependencies(
        settings, providers={ProviderName.SCRIPTED: ScriptedProvider()}, dsn=stack.dsn
    )
    queue = unique("tq")

    async with build_worker(skipping.client, deps, task_queue=queue) as worker:
        harness = Harness(skipping.client, queue, deps, ScriptedProvider(), worker, deps.db)
        agent = await harness.create_agent()
        first = await harness.say(agent.handle, "hello")
        assert first.marker is not None
        conversation = first.marker.conversation_id
        conv_handle = skipping.client.get_workflow_handle_for(
            ConversationWorkflow.run, names.conversation_workflow_id(str(conversation))
        )

        await skipping.sleep(timedelta(minutes=29))
        window = await conv_handle.query(names.WINDOW, WindowQuery(), result_type=WindowAnswer)
        assert [t.text for t in window.window] == ["hello", "hello"]

        await skipping.sleep(timedelta(minutes=2))
        closed = await conv_handle.result()
        assert closed.reason == "idle"
        agent_handle = skipping.client.get_workflow_handle(names.agent_workflow_id(agent.handle))
        status = await agent_handle.query(names.STATUS, AgentStatusQuery(), result_type=AgentStatus)
        assert status.open_conversations == []
        async with deps.db.session() as session:
            row = (
                await session.exec(select(Conversation).where(Conversation.id == conversation))
            ).one()
        assert row.status == "closed" and row.close_reason == "idle" and row.turns == 2

        second = await inbox.submit(
            skipping.client, handle=agent.handle, event=event("again"), task_queue=queue
        )
        assert second.marker is not None
        assert second.marker.conversation_id != conversation
    await close_dependencies(deps)
