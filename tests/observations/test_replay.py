"""Observation workflows replay deterministically: fresh histories and recorded ones.

PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept, never
rewritten: a change to workflow code must replay them (``workflow.patched``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from schemas.observations import ObserveResult
from tests.harness import Harness, Stack, record_new_histories, replayer
from tests.memory.formation.helpers import formation_rules, formation_worker, new_agent
from tests.memory.formation.test_replay_formation import _scrubbed
from tests.observations.test_pipeline import EXTRACT, script

HISTORIES = Path(__file__).parent / "histories"
NAMES = [
    "observation_conversation",
    "observation_reconciled",
    "observation_extraction_failed",
]


async def _observations(client: Client, conversation_id: str) -> list[str]:
    """IDs of the observation runs a conversation started, from its own history."""
    handle = client.get_workflow_handle(names.conversation_workflow_id(conversation_id))
    found: list[str] = []
    async for event in handle.fetch_history_events():
        if event.HasField("start_child_workflow_execution_initiated_event_attributes"):
            attrs = event.start_child_workflow_execution_initiated_event_attributes
            if attrs.workflow_type.name == names.OBSERVATION_WORKFLOW:
                found.append(attrs.workflow_id)
    return found


async def _talk(harness: Harness, agent: str, text: str) -> tuple[str, str, ObserveResult]:
    """Say ``text``, wait for the close; the conversation, its observation run, and its result."""
    receipt = await harness.say(agent, text)
    assert receipt.marker and receipt.marker.conversation_id
    conversation = receipt.marker.conversation_id
    await harness.client.get_workflow_handle(names.conversation_workflow_id(conversation)).result()
    (observe_id,) = await _observations(harness.client, conversation)
    handle = harness.client.get_workflow_handle(observe_id, result_type=ObserveResult)
    return conversation, observe_id, await handle.result()


async def _scenario(harness: Harness) -> dict[str, WorkflowHistory]:
    """Facts added, one updated, and an extraction whose provider refuses the request."""
    agent = await new_agent(harness.db, idle_minutes=0.1)
    _, _, first = await _talk(harness, agent, "I live in Leeds and I work as a nurse.")
    assert (first.proposed, first.added) == (2, 2)
    conversation, reconciled, moved = await _talk(harness, agent, "Big news: I moved to York!")
    assert (moved.proposed, moved.updated) == (1, 1)
    _, failed, nothing = await _talk(harness, agent, "Nothing to see here, refused.")
    assert nothing == ObserveResult()

    async def history(workflow_id: str) -> WorkflowHistory:
        return await harness.client.get_workflow_handle(workflow_id).fetch_history()

    return {
        "observation_conversation": await history(names.conversation_workflow_id(conversation)),
        "observation_reconciled": await history(reconciled),
        "observation_extraction_failed": await history(failed),
    }


async def test_fresh_observation_histories_replay(client: Client, stack: Stack) -> None:
    refused = ScriptRule(task="observe", system_match=EXTRACT, match="refused", fail="invalid")
    async with formation_worker(
        client, stack, rules=[refused, *script(), *formation_rules()]
    ) as harness:
        histories = await _scenario(harness)
    record_new_histories(HISTORIES, histories, text=lambda h: _scrubbed(h.to_json()))
    for history in histories.values():
        await replayer(client).replay_workflow(history)


@pytest.mark.parametrize("name", NAMES)
async def test_recorded_observation_histories_replay(name: str, client: Client) -> None:
    path = HISTORIES / f"{name}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)
