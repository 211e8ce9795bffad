"""Activations with the emotion steps replay: taking stock after the reply, and declining.

PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept, never
rewritten. Activations recorded before the emotional state existed replay too (their histories
in tests/histories/ and tests/deliberation/histories/): both steps are behind the ``emotion``
patch.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from contract import names
from schemas.events import Outcome, Receipt
from tests.emotion.helpers import classifier, emotion_worker, feels, optional
from tests.harness import Harness, Stack, record_new_histories, replayer

HISTORIES = Path(__file__).parent / "histories"
RECORDED = ["activation_takes_stock", "activation_declines"]


async def _history(harness: Harness, receipt: Receipt) -> WorkflowHistory:
    assert receipt.marker is not None and receipt.marker.activation_id
    handle = harness.client.get_workflow_handle(
        names.activation_workflow_id(receipt.marker.activation_id)
    )
    await handle.result()
    return await handle.fetch_history()


def activities(history: WorkflowHistory) -> list[str]:
    scheduled = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == scheduled
    ]


async def test_fresh_histories_replay(client: Client, stack: Stack) -> None:
    rules = [
        *classifier(then=feels(frustrated=0.9, neutral=0.1)),
        optional("poem", is_optional=True),
    ]
    async with emotion_worker(client, stack, rules) as harness:
        agent = (await harness.create_agent()).handle
        first = await harness.say(agent, "I have asked this three times now")
        stock = await _history(harness, first)
        poem = await harness.say(agent, "now write me a poem")
        declined = await _history(harness, poem)
    assert poem.marker is not None and poem.marker.outcome is Outcome.SILENT
    assert "emotion.classify" in activities(stock)
    assert "emotion.weigh_request" in activities(declined)
    histories = {"activation_takes_stock": stock, "activation_declines": declined}
    record_new_histories(HISTORIES, histories)
    for history in histories.values():
        await replayer(client).replay_workflow(history)


@pytest.mark.parametrize("name", RECORDED)
async def test_recorded_histories_replay(name: str, client: Client) -> None:
    path = HISTORIES / f"{name}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)
