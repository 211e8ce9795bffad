"""Deliberation replays deterministically: fresh and recorded histories, and the drawn lens.

PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept, never
rewritten: a change to workflow code must replay them (``workflow.patched``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from contract import names
from schemas.deliberation import DRAWN_LENSES
from tests.deliberation.helpers import claim_rules, new_agent, worker
from tests.harness import Harness, Stack, record_new_histories, replayer, terminal

HISTORIES = Path(__file__).parent / "histories"
RECORDED = ["activation_inline", "activation_deferred", "deliberation"]


def critique_ids(history: WorkflowHistory) -> list[str]:
    scheduled = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    return sorted(
        e.activity_task_scheduled_event_attributes.activity_id
        for e in history.events
        if e.event_type == scheduled
        and e.activity_task_scheduled_event_attributes.activity_id.startswith("critique-")
    )


async def _activation(harness: Harness, activation_id: str) -> WorkflowHistory:
    handle = harness.client.get_workflow_handle(names.activation_workflow_id(activation_id))
    await handle.result()
    return await handle.fetch_history()


async def _scenario(harness: Harness) -> dict[str, WorkflowHistory]:
    handle = await new_agent(harness.db)
    inline = await harness.say(handle, "what about the report?", channel=terminal("inline"))
    deferred = await harness.say(handle, "and the report?")
    assert inline.marker is not None and inline.marker.activation_id
    assert deferred.marker is not None and deferred.marker.activation_id
    # Released, the deferred activation deliberates itself: its history holds the critics.
    return {
        "activation_inline": await _activation(harness, inline.marker.activation_id),
        "activation_deferred": await _activation(harness, deferred.marker.activation_id),
    }


async def test_fresh_histories_replay(client: Client, stack: Stack) -> None:
    settings = {"channels": {"terminal:inline": "inline"}}
    async with worker(client, stack, rules=claim_rules(), deliberation=settings) as harness:
        histories = await _scenario(harness)
    record_new_histories(HISTORIES, histories)
    for history in histories.values():
        await replayer(client).replay_workflow(history)
    # Each turn, inline and deferred, ran the provenance gate and exactly one drawn lens.
    for name in ("activation_inline", "activation_deferred"):
        ran = critique_ids(histories[name])
        assert len(ran) == 2 and "critique-provenance" in ran, name
        [drawn] = [i for i in ran if i != "critique-provenance"]
        assert drawn.removeprefix("critique-") in {lens.value for lens in DRAWN_LENSES}


@pytest.mark.parametrize("name", RECORDED)
async def test_recorded_histories_replay(name: str, client: Client) -> None:
    path = HISTORIES / f"{name}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)


@pytest.mark.parametrize("name", ["activation_inline", "deliberation"])
async def test_the_drawn_lens_is_pinned_by_the_history(name: str, client: Client) -> None:
    """A replay that drew another lens would not match the history: the draw is deterministic,
    and a change that broke it could not go unnoticed."""
    recorded = (HISTORIES / f"{name}.json").read_text()
    [drawn] = [
        i for i in critique_ids(WorkflowHistory.from_json(name, recorded)) if "provenance" not in i
    ]
    other = next(f"critique-{lens.value}" for lens in DRAWN_LENSES if f"critique-{lens}" != drawn)
    tampered = json.loads(recorded.replace(f'"{drawn}"', f'"{other}"'))
    assert json.dumps(tampered) != json.dumps(json.loads(recorded))
    with pytest.raises(Exception, match=r"(?i)nondetermin"):
        await replayer(client).replay_workflow(WorkflowHistory.from_json(name, tampered))
