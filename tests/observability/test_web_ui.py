"""What the Web UI shows comes from Temporal: summaries, handler descriptions, timer summaries.

Each check reads what the UI itself reads: ``describe`` (the static summary), the built-in
``__temporal_workflow_metadata`` query (handler descriptions and current details) and the
history's timer events (timer summaries).
"""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import WorkflowHandle
from temporalio.converter import DataConverter

from contract import names
from schemas.agents import AgentWorkflowInput
from tests.harness import Harness, until

METADATA_QUERY = "__temporal_workflow_metadata"


async def metadata(handle: WorkflowHandle[object, object]) -> WorkflowMetadata:
    answer: WorkflowMetadata = await handle.query(METADATA_QUERY, result_type=WorkflowMetadata)
    return answer


async def timer_summaries(
    handle: WorkflowHandle[object, object], converter: DataConverter
) -> list[str]:
    summaries = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_TIMER_STARTED:
            # Through the client's converter: the payload codec seals summaries too.
            [summary] = await converter.decode([event.user_metadata.summary])
            summaries.append(summary)
    return summaries


def undescribed(meta: WorkflowMetadata) -> list[str]:
    definition = meta.definition
    handlers = [
        *definition.signal_definitions,
        *definition.query_definitions,
        *definition.update_definitions,
    ]
    return [h.name for h in handlers if not h.name.startswith("__") and not h.description]


async def test_every_handler_and_the_conversations_timer_explain_themselves(
    harness: Harness,
) -> None:
    agent = await harness.create_agent()
    receipt = await harness.say(agent.handle, "hello")  # update-with-start
    assert receipt.marker is not None and receipt.marker.conversation_id is not None
    inbox = harness.client.get_workflow_handle(names.agent_workflow_id(agent.handle))
    conversation = harness.client.get_workflow_handle(
        names.conversation_workflow_id(receipt.marker.conversation_id)
    )

    described = await inbox.describe()
    assert await described.static_summary() == f"inbox and lock of agent {agent.handle}"

    agent_meta = await metadata(inbox)
    assert undescribed(agent_meta) == []
    updates = {s.name for s in agent_meta.definition.update_definitions}
    assert updates == {names.SUBMIT, names.PEER, names.PULL_OUTBOX}
    assert agent_meta.current_details.startswith(f"inbox and lock of agent {agent.handle}: ")
    assert undescribed(await metadata(conversation)) == []

    # The lock is bounded by the activation's run timeout: the agent starts no timer of its
    # own for the event it holds (``lock-bounded-by-run-limit``).
    assert await timer_summaries(inbox, harness.client.data_converter) == []

    async def idle_timer_started() -> bool:
        # The conversation waits for its next input once the turn's after-work is done.
        return any(
            s.startswith("idle timeout")
            for s in await timer_summaries(conversation, harness.client.data_converter)
        )

    await until(idle_timer_started)


async def test_after_continue_as_new_the_agents_details_still_name_it(harness: Harness) -> None:
    agent = await harness.create_agent()
    await harness.client.start_workflow(
        "AgentWorkflow",
        AgentWorkflowInput(handle=agent.handle, continue_as_new_after=1),
        id=names.agent_workflow_id(agent.handle),
        task_queue=harness.task_queue,
    )
    inbox = harness.client.get_workflow_handle(names.agent_workflow_id(agent.handle))
    first_run = (await inbox.describe()).run_id
    await harness.say(agent.handle, "one")
    await harness.say(agent.handle, "two")

    assert (await inbox.describe()).run_id != first_run
    # SDK 1.35 gives continue-as-new no summary: the current details carry the run's name
    # (set once the new run has loaded its agent).
    named = f"inbox and lock of agent {agent.handle}: "

    async def details_name_the_run() -> bool:
        return (await metadata(inbox)).current_details.startswith(named)

    await until(details_name_the_run)
