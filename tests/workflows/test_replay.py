"""Every workflow replays deterministically: fresh histories, and histories recorded earlier.

Set PERSYN_RECORD_HISTORIES=1 to refresh the recorded histories in tests/histories/ (do it
only when a change is meant to be incompatible, together with a ``workflow.patched`` gate).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory

from contract import names
from schemas.agents import AgentConfig, AgentCreate
from store.queries.agents import create_agent
from tests.harness import Harness, replayer, unique
from workflows.conversation import ConversationWorkflow

HISTORIES = Path(__file__).parent.parent / "histories"


async def _run_scenario(harness: Harness) -> dict[str, WorkflowHistory]:
    handle = unique("replay")
    async with harness.db.session() as session:
        await create_agent(
            session,
            spec=AgentCreate(
                handle=handle,
                name="Replay",
                persona="A test agent.",
                config=AgentConfig(idle_minutes=0.02),
            ),
        )
    first = await harness.say(handle, "first")
    await harness.say(handle, "observed", addressed=False)
    assert first.marker is not None and first.marker.conversation_id and first.marker.activation_id
    conversation = harness.client.get_workflow_handle_for(
        ConversationWorkflow.run, names.conversation_workflow_id(first.marker.conversation_id)
    )
    closed = await conversation.result()  # closes after ~1 s idle
    assert closed.reason == "idle"
    client: Client = harness.client
    return {
        "agent": await client.get_workflow_handle(names.agent_workflow_id(handle)).fetch_history(),
        "conversation": await conversation.fetch_history(),
        "activation": await client.get_workflow_handle(
            names.activation_workflow_id(first.marker.activation_id)
        ).fetch_history(),
    }


async def test_fresh_histories_replay(harness: Harness) -> None:
    histories = await _run_scenario(harness)
    if os.environ.get("PERSYN_RECORD_HISTORIES") == "1":
        HISTORIES.mkdir(exist_ok=True)
        for name, history in histories.items():
            (HISTORIES / f"{name}.json").write_text(history.to_json())
    for history in histories.values():
        await replayer().replay_workflow(history)


@pytest.mark.parametrize("name", ["agent", "conversation", "activation"])
async def test_recorded_histories_replay(name: str) -> None:
    path = HISTORIES / f"{name}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
    await replayer().replay_workflow(history)
