"""The reply travels by reference: the steps after generation get a ``DraftRef``, not its text.

The candidate is stored in ``drafts`` by the generation activity; the judge, the critics, the
refiner, parking, the deferred deliberation and transmit load it by ID. Its text is left only
in what the activation hands back (the transmitted turn, the completion marker to the agent and
the activation's result), which the submitter and the conversation's window need.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from activities.gateway.providers.scripted import Script, ScriptedProvider
from contract import names
from store.sql import execute
from tests.deliberation.helpers import (
    CLAIM,
    HEDGED,
    claim_rules,
    deferred_conclusion,
    new_agent,
    settled,
    worker,
)
from tests.harness import Harness, Stack
from tests.memory.forget_audit import payloads_of

OUTPUTS = {
    EventType.EVENT_TYPE_MARKER_RECORDED,  # the transmitted turn (the local activity's result)
    # the agent's marker, and the conversation's exchange (the reply turn, for its window)
    EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,  # the reply turn, for the window
}


async def events_holding(harness: Harness, workflow_id: str, needle: str) -> list[int]:
    """Event types of ``workflow_id``'s history whose decoded payloads hold ``needle``."""
    history = await harness.client.get_workflow_handle(workflow_id).fetch_history()
    codec = harness.client.data_converter.payload_codec
    found: list[int] = []
    for event in history.events:
        payloads = list(payloads_of(event))
        if codec is not None and payloads:
            payloads = await codec.decode(payloads)
        if any(needle.encode() in p.data for p in payloads):
            found.append(event.event_type)
    return found


async def test_the_reply_reaches_every_step_by_reference(client: Client, stack: Stack) -> None:
    provider = ScriptedProvider(Script(rules=claim_rules()))
    async with worker(client, stack, provider=provider) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "what did we agree about the report?")
        assert receipt.marker is not None and receipt.marker.text == CLAIM
        activation_id = await settled(harness, receipt.marker.activation_id)
        result = await deferred_conclusion(harness, activation_id)
        assert result.parked_id is not None and result.deliberated.text == HEDGED

        async with harness.db.session() as session:
            stored = (
                await execute(
                    session,
                    "SELECT text FROM drafts WHERE activation_id = :a AND agent = :h",
                    {"a": activation_id, "h": handle},
                )
            ).all()
            parked = (
                await execute(
                    session,
                    "SELECT candidate FROM parked_conclusions WHERE activation_id = :a",
                    {"a": activation_id},
                )
            ).one()
        assert [row.text for row in stored] == [CLAIM]
        assert parked.candidate == CLAIM  # the critics and parking read it by reference

        in_activation = await events_holding(
            harness, names.activation_workflow_id(activation_id), CLAIM
        )
    # No activity input or result, no child's input: only what the activation hands back.
    assert in_activation and set(in_activation) <= OUTPUTS, in_activation
    assert len(in_activation) == 4
