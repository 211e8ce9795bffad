"""Memory-formation workflows replay deterministically: fresh histories and recorded ones.

PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept, never
rewritten: a change to workflow code must replay them (``workflow.patched``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHistory

from activities.gateway.providers.scripted import ScriptRule
from contract.names import consolidation_workflow_id
from schemas.ids import new_ulid
from schemas.memory import MemorySettings
from schemas.memory_formation import ConsolidationResult, MaintenanceInput, MaintenanceResult
from tests.harness import Harness, Stack, record_new_histories, replayer
from tests.memory.formation.helpers import (
    SUMMARY_SYSTEM,
    close_and_consolidate,
    consolidation_ids,
    formation_rules,
    formation_worker,
    new_agent,
    rows,
)
from workflows.maintenance import MaintenanceWorkflow

HISTORIES = Path(__file__).parents[2] / "histories"
NAMES = [
    "formation_conversation",
    "formation_consolidation",
    "formation_consolidation_failed",
    "formation_maintenance",
    "formation_sweep",
]


def _scrubbed(history_json: str) -> str:
    """The history without failure stack traces (they name files of the recording machine)."""

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if k != "stackTrace"}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    return json.dumps(scrub(json.loads(history_json)))


async def _scenario(harness: Harness) -> dict[str, WorkflowHistory]:
    """Chunks while talking (the first fails once), a close that picks it up, a sweep."""
    client: Client = harness.client
    agent = await new_agent(harness.db, idle_minutes=0.1)
    receipts = [
        await harness.say(agent, f"Part {n} of my story. " + "It rained all afternoon. " * 9)
        for n in range(3)
    ]
    conversation = receipts[0].marker.conversation_id if receipts[0].marker else None
    assert conversation is not None
    results = await close_and_consolidate(client, conversation)
    ids = await consolidation_ids(client, conversation)
    failed = next(i for i, r in zip(ids, results, strict=True) if r.failed)
    picked = next(i for i, r in zip(ids, results, strict=True) if len(r.formed) > 1)

    # A failed range with nothing left to remember, for the maintenance sweep to find.
    (channel,) = await rows(harness.db, "SELECT id FROM channels WHERE agent = :a", a=agent)
    await rows(
        harness.db,
        "INSERT INTO memory_formations (id, agent, conversation_id, channel_id, through_turn, "
        "status, attempts, created_at, updated_at) VALUES (:id, :a, :c, :ch, :t, 'failed', 1, "
        "now(), now()) RETURNING id",
        id=new_ulid(),
        a=agent,
        c=new_ulid(),
        ch=channel.id,
        t=new_ulid(),
    )
    maintenance = await client.start_workflow(
        MaintenanceWorkflow.run,
        MaintenanceInput(agent=agent),
        id=f"maintenance/{agent}-replay",
        task_queue=harness.task_queue,
    )
    done: MaintenanceResult = await maintenance.result()
    assert done.sweep is not None
    sweep = client.get_workflow_handle(
        consolidation_workflow_id(done.sweep), result_type=ConsolidationResult
    )
    assert (await sweep.result()).empty == 1
    return {
        "formation_conversation": await client.get_workflow_handle(
            f"conversation/{conversation}"
        ).fetch_history(),
        "formation_consolidation": await client.get_workflow_handle(picked).fetch_history(),
        "formation_consolidation_failed": await client.get_workflow_handle(failed).fetch_history(),
        "formation_maintenance": await maintenance.fetch_history(),
        "formation_sweep": await sweep.fetch_history(),
    }


async def test_fresh_formation_histories_replay(client: Client, stack: Stack) -> None:
    once = ScriptRule(task="summarize", system_match=SUMMARY_SYSTEM, fail="invalid", times=1)
    async with formation_worker(
        client,
        stack,
        rules=[once, *formation_rules()],
        settings_overrides={"memory": MemorySettings(chunk_tokens=200), "encoder": "none"},
    ) as harness:
        histories = await _scenario(harness)
    record_new_histories(HISTORIES, histories, text=lambda h: _scrubbed(h.to_json()))
    for history in histories.values():
        await replayer(client).replay_workflow(history)


@pytest.mark.parametrize("name", NAMES)
async def test_recorded_formation_histories_replay(name: str, client: Client) -> None:
    path = HISTORIES / f"{name}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)
