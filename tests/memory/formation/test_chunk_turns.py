"""A conversation of short turns forms memories while it goes on, every ``chunk_turns`` turns."""

from __future__ import annotations

from temporalio.client import Client

from contract import names
from schemas.conversation import WindowAnswer, WindowQuery
from schemas.memory import MemorySettings
from schemas.memory_formation import ConsolidationResult
from tests.harness import Stack, until
from tests.memory.formation.helpers import (
    consolidation_ids,
    formation_rules,
    formation_worker,
    new_agent,
    records_of,
)


async def chunks_after_three_exchanges(client: Client, stack: Stack, chunk_turns: int) -> list[str]:
    memory = MemorySettings(chunk_turns=chunk_turns)
    async with formation_worker(
        client,
        stack,
        rules=formation_rules(),
        settings_overrides={"encoder": "none", "memory": memory},
    ) as harness:
        agent = await new_agent(harness.db)  # open for 30 minutes: no close consolidates
        first = await harness.say(agent, "My sister's name is Ines.")
        await harness.say(agent, "She lives in Porto.")
        await harness.say(agent, "And she has a cat.")
        assert first.marker and first.marker.conversation_id
        conversation = client.get_workflow_handle(
            names.conversation_workflow_id(first.marker.conversation_id)
        )

        async def third_reply_taken() -> bool:
            # The loop takes exchanges in order: the third reply in the window means the
            # second exchange's count (and any consolidation it started) is done.
            answer = await conversation.query(names.WINDOW, WindowQuery(), result_type=WindowAnswer)
            return len(answer.window) == 6

        await until(third_reply_taken)
        started = await consolidation_ids(client, first.marker.conversation_id)
        for workflow_id in started:
            result = await client.get_workflow_handle(
                workflow_id, result_type=ConsolidationResult
            ).result()
            assert result.formed and not result.failed
        assert len(await records_of(harness.db, agent)) == len(started)
        return started


async def test_short_turns_form_a_memory_every_four_turns_at_chunk_turns_four(
    client: Client, stack: Stack
) -> None:
    assert len(await chunks_after_three_exchanges(client, stack, chunk_turns=4)) == 1


async def test_with_chunk_turns_off_short_turns_wait_for_the_tokens(
    client: Client, stack: Stack
) -> None:
    assert await chunks_after_three_exchanges(client, stack, chunk_turns=0) == []
