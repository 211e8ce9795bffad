"""A reply is recorded once even when the workflow task that transmitted it is run again.

The transmit step is a local activity: its reply turn and outbox row are committed while the
activation's workflow task is still open. If that task never completes (the worker is killed,
or Temporal cannot be told), Temporal runs it again from the last completed task, and the
transmit runs again. The retry must name the same reply turn, or the dialog holds the reply
twice (the outbox, keyed by activation, would still hold it once): the soak's
"reply recorded 2 times" with one activation and one outbox row.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlmodel import select
from temporalio.client import Client

from contract import names
from schemas.events import Outcome
from store.tables import ActivationRow, DialogTurnRow, OutboxRow
from systemtests.soak.checks import retried_task_note
from tests.harness import Harness, Stack, replayer
from tests.workflows.gates import Gates, gated_worker


@pytest.fixture
def gates() -> Gates:
    return Gates()


@pytest.fixture
async def harness(client: Client, stack: Stack, gates: Gates) -> AsyncIterator[Harness]:
    async with gated_worker(client, stack, gates) as running:
        yield running


async def test_a_transmit_run_again_by_a_retried_workflow_task_records_one_reply(
    harness: Harness, gates: Gates
) -> None:
    # The task that transmitted and recorded the reply (one local activity) fails before its
    # next command, the agent's release: nothing it did reaches the history, so the retried
    # task transmits again.
    failure = gates.fail_task(
        workflow_type=names.ACTIVATION_WORKFLOW, before_signal=names.ACTIVATION_FINISHED
    )
    agent = await harness.create_agent()

    receipt = await harness.say(agent.handle, "say it once")

    assert len(failure.failed) == 1  # the retry happened
    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == "ack: say it once"
    async with harness.db.session() as session:
        replies: Any = await session.exec(
            select(DialogTurnRow.id).where(
                DialogTurnRow.agent == agent.handle, DialogTurnRow.role == "agent"
            )
        )
        turns = replies.all()
        queued: Any = await session.exec(
            select(OutboxRow.id).where(OutboxRow.agent == agent.handle)
        )
        runs: Any = await session.exec(
            select(ActivationRow.id).where(ActivationRow.agent == agent.handle)
        )
        assert len(turns) == 1, f"the reply was recorded as {len(turns)} turns: {turns}"
        assert queued.all() == turns
        assert runs.all() == [receipt.marker.activation_id]
    # The activation's history, with its failed task, replays deterministically.
    assert receipt.marker.activation_id is not None
    activation = names.activation_workflow_id(receipt.marker.activation_id)
    found = await harness.client.get_workflow_handle(activation).fetch_history()
    await replayer(harness.client).replay_workflow(found)


def test_the_soak_names_a_duplicate_made_by_a_retried_task() -> None:
    # The two turns the test above recorded before the fix: one random part, two times.
    retried = "01M8S5R84E66TYGB5RXWV3EJC1@c#1 01M8S5R85A66TYGB5RXWV3EJC1@c#2"
    assert "retried workflow task" in retried_task_note(retried)
    two_runs = "01M8S5R84E66TYGB5RXWV3EJC1@c#1 01M8S5R85AQ9KVD935FQSH4HDT@d#1"
    assert retried_task_note(two_runs) == ""
