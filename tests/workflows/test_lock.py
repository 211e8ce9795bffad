"""One lock and one marker: every outcome releases the agent through the same path, every
completion marker lives ``MARKER_TTL``, and the agent holds on to no finished work."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from schemas.agents import AgentStatus
from schemas.events import CompletionMarker, Outcome, Receipt
from schemas.ids import new_ulid
from schemas.markers import MARKER_TTL, completion_marker, failed_marker
from tests.harness import Harness, event, terminal, until


def marker_of(receipt: Receipt) -> CompletionMarker:
    assert receipt.marker is not None, receipt
    return receipt.marker


async def status(harness: Harness, handle: str) -> AgentStatus:
    answer: AgentStatus = await harness.client.get_workflow_handle(
        names.agent_workflow_id(handle)
    ).query(names.STATUS, result_type=AgentStatus)
    return answer


def test_every_marker_factory_gives_the_same_lifetime() -> None:
    at = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    event_id = new_ulid()
    spoke = completion_marker(event_id=event_id, outcome=Outcome.SPOKE, at=at, text="Hi.")
    failed = failed_marker(event_id, "the activation failed: boom", at=at)
    assert timedelta(hours=1) == MARKER_TTL
    for marker in (spoke, failed):
        assert marker.completed_at == at and marker.expires_at == at + MARKER_TTL
    assert failed.outcome is Outcome.FAILED and failed.reason == "the activation failed: boom"
    assert spoke.outcome is Outcome.SPOKE and spoke.text == "Hi." and spoke.reason is None


async def test_every_outcome_releases_the_agent_with_a_marker_that_lives_marker_ttl(
    harness: Harness,
) -> None:
    """Spoke (the activation), refused routing (the agent) and terminated (the conversation)."""
    handle = (await harness.create_agent()).handle
    spoke = marker_of(await harness.say(handle, "hello there"))
    assert spoke.outcome is Outcome.SPOKE

    stray = event("where were we?").model_copy(update={"conversation_id": new_ulid()})
    unrouted = marker_of(await harness.send(handle, stray))
    assert unrouted.outcome is Outcome.FAILED and "is not open" in (unrouted.reason or "")

    harness.provider.script.rules[:] = [ScriptRule(task="respond", delay_ms=60_000, reply="late")]
    stuck = event("take your time")
    submitted = asyncio.ensure_future(harness.send(handle, stuck))
    running: list[str] = []

    done = names.activation_workflow_id(spoke.activation_id or "")

    async def activation_running() -> bool:
        # The first activation may still be finishing its bookkeeping: not that one.
        query = (
            f"WorkflowType='ActivationWorkflow' AND PersynAgent='{handle}' "
            "AND ExecutionStatus='Running'"
        )
        running[:] = [w.id async for w in harness.client.list_workflows(query) if w.id != done]
        return bool(running)

    await until(activation_running)
    await harness.client.get_workflow_handle(running[0]).terminate(reason="test: stuck")
    terminated = marker_of(await asyncio.wait_for(submitted, 60))
    harness.provider.script.rules[:] = []
    assert terminated.outcome is Outcome.FAILED and "terminated" in (terminated.reason or "")
    assert terminated.activation_id is not None

    for marker in (spoke, unrouted, terminated):
        assert marker.expires_at - marker.completed_at == MARKER_TTL, marker
    # Every release freed the lock: the next message is answered as usual.
    after = marker_of(await harness.say(handle, "still there?"))
    assert after.outcome is Outcome.SPOKE
    # The unrouted event never entered a conversation, so three were handled.
    assert (await status(harness, handle)).handled == 3


async def test_the_agent_keeps_no_finished_conversation_start(harness: Harness) -> None:
    """Each channel's first message starts a conversation in the background; none stays held."""
    handle = (await harness.create_agent()).handle
    for channel in ("one", "two", "three"):
        receipt = await harness.say(handle, f"hello on {channel}", channel=terminal(channel))
        assert marker_of(receipt).outcome is Outcome.SPOKE

    async def idle() -> bool:
        return (await status(harness, handle)).in_flight_event is None

    await until(idle)
    answer = await status(harness, handle)
    assert len(answer.open_conversations) == 3
    assert answer.starting_conversations == 0
