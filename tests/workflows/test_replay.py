"""Every workflow replays deterministically: fresh histories, and histories recorded earlier.

PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept, never
rewritten: a change to workflow code must replay them (``workflow.patched``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory

from contract import names
from schemas.agents import AgentConfig, AgentCreate
from store.queries.agents import create_agent
from tests.harness import Harness, record_new_histories, replayer, unique
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
    activation = await client.get_workflow_handle(
        names.activation_workflow_id(first.marker.activation_id)
    ).fetch_history()
    return {
        "agent": await client.get_workflow_handle(names.agent_workflow_id(handle)).fetch_history(),
        "conversation": await conversation.fetch_history(),
        "activation": activation,
        # Kept under its own name: the first recorded after ``reply-steps-joined``.
        "activation_reply_steps": activation,
        # The first started with its patches named in its input (workflows/pipeline/shape.py).
        "activation_shape1": activation,
    }


async def test_fresh_histories_replay(harness: Harness) -> None:
    histories = await _run_scenario(harness)
    record_new_histories(HISTORIES, histories)
    for history in histories.values():
        await replayer(harness.client).replay_workflow(history)


RECORDED = ["agent", "conversation", "activation"]
ADMISSION_ERA = ["agent_admission", "conversation_admission", "activation_admission"]
"""Recorded at bc46219 (admission, before ``turn-in-exchange`` and
``deferred-deliberation-in-run``): two turns in one conversation, the second told by
``turn_taken`` and deliberated on by a ``DeliberationWorkflow`` the activation started."""


REPLY_STEPS = ["activation_reply_steps", "activation_shape1"]
"""Recorded after ``reply-steps-joined``: the plan and the screen in one local activity, the
reply sent and recorded in another; the first asking each patch (shape 0), the second started
at shape 1, asking none of the patches folded into it."""


TIMERS_PER_MESSAGE = ["agent_lock_timer", "conversation_idle_rearmed"]
"""Recorded at fe73493, before ``lock-bounded-by-run-limit`` and ``idle-timer-kept``: an agent's
run continued at shape 1 that started and cancelled a lock timer for its event, and a
conversation of three exchanges that restarted its idle timer after each, then closed idle."""


@pytest.mark.parametrize("name", RECORDED + ADMISSION_ERA + REPLY_STEPS + TIMERS_PER_MESSAGE)
async def test_recorded_histories_replay(name: str, client: Client) -> None:
    path = HISTORIES / f"{name}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)
