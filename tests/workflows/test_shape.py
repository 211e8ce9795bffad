"""An activation's patches named in its input: no marker for a patch its shape folds in."""

from __future__ import annotations

import json
from collections.abc import Sequence

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from contract import names
from tests.harness import Harness
from workflows.pipeline import afford, approval, decide, deliberate, respond, review, transmit
from workflows.pipeline.shape import FOLDED, SHAPE

ACTIVATION_PATCHES = {
    afford.PATCH,
    respond.PATCH_DRAFTS,
    respond.PATCH_OWN_CHANNEL,
    decide.GUARDRAIL_VETO_PATCH,
    decide.EMOTION_PATCH,
    transmit.DEGRADED_OUTCOME_PATCH,
    transmit.STABLE_REPLY_ID_PATCH,
    deliberate.DEFERRED_IN_RUN_PATCH,
    review.PATCH,
}
"""Every patch the activation's steps ask with its input at hand (the approval gate's is asked
only for a call marked for approval, and stays a marker)."""


def test_the_folded_patches_are_the_activation_s_own() -> None:
    assert set(FOLDED) == ACTIVATION_PATCHES
    assert approval.PATCH not in FOLDED
    assert all(1 <= shape <= SHAPE for shape in FOLDED.values())


def _patch_ids(events: Sequence[HistoryEvent]) -> list[str]:
    found = []
    for event in events:
        if event.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
            continue
        details = event.marker_recorded_event_attributes.details
        if "patch-data" in details:
            payload = details["patch-data"].payloads[0].data
            found.append(json.loads(payload)["id"])
    return found


async def test_an_activation_the_agent_starts_writes_no_folded_patch_marker(
    harness: Harness,
) -> None:
    agent = await harness.create_agent()
    await harness.say(agent.handle, "hello")
    receipt = await harness.say(agent.handle, "how are you today, and what did we say before?")
    assert receipt.marker is not None and receipt.marker.activation_id is not None
    handle = harness.client.get_workflow_handle(
        names.activation_workflow_id(receipt.marker.activation_id)
    )
    await handle.result()
    events = [e async for e in handle.fetch_history_events()]
    started = events[0].workflow_execution_started_event_attributes
    codec = harness.client.data_converter.payload_codec
    payloads = list(started.input.payloads)
    [payload] = await codec.decode(payloads) if codec is not None else payloads
    assert json.loads(payload.data)["shape"] == SHAPE
    assert not set(_patch_ids(events)) & set(FOLDED), _patch_ids(events)
