"""On Temporal's time-skipping server: a conversation left idle closes on time and is remembered."""

from __future__ import annotations

from datetime import timedelta

from temporalio.testing import WorkflowEnvironment

from activities.gateway.providers.scripted import Script, ScriptedProvider
from contract import names
from schemas.conversation import WindowAnswer, WindowQuery
from schemas.models import ProviderName
from tests.harness import Harness, Stack, unique
from tests.memory.formation.helpers import (
    close_and_consolidate,
    consolidation_ids,
    formation_rules,
    new_agent,
    records_of,
    rows,
)
from workers.build import build_dependencies, build_worker


async def test_an_idle_conversation_closes_after_thirty_minutes_and_becomes_a_memory(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    provider = ScriptedProvider(Script(rules=formation_rules()))
    deps = build_dependencies(
        stack.settings(encoder="none"), providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn
    )
    queue = unique("tq")
    async with build_worker(skipping.client, deps, task_queue=queue) as worker:
        harness = Harness(skipping.client, queue, deps, provider, worker, deps.db)
        agent = await new_agent(deps.db)  # the default 30 minutes of idleness
        receipt = await harness.say(agent, "Good morning! The roses are out.")
        assert receipt.marker and receipt.marker.conversation_id
        conversation = receipt.marker.conversation_id
        handle = skipping.client.get_workflow_handle(names.conversation_workflow_id(conversation))

        await skipping.sleep(timedelta(minutes=29))
        window = await handle.query(names.WINDOW, WindowQuery(), result_type=WindowAnswer)
        assert len(window.window) == 2  # still open, and nothing consolidated yet
        assert await consolidation_ids(skipping.client, conversation) == []
        assert await records_of(deps.db, agent) == []

        await skipping.sleep(timedelta(minutes=2))
        (result,) = await close_and_consolidate(skipping.client, conversation)
        (record,) = await records_of(deps.db, agent)
        assert result.formed == [record.id]
        turns = await rows(
            deps.db,
            "SELECT id FROM dialog_turns WHERE conversation_id = :c ORDER BY at, id",
            c=conversation,
        )
        assert (record.turn_first, record.turn_last) == (turns[0].id, turns[-1].id)
        closed = await rows(
            deps.db, "SELECT status, close_reason FROM conversations WHERE id = :c", c=conversation
        )
        assert (closed[0].status, closed[0].close_reason) == ("closed", "idle")
    await deps.aclose()
