"""An agent you can talk to: the full pipeline on the real Temporal and PostgreSQL."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sqlmodel import select
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner

from schemas.events import Outcome
from schemas.settings import Settings
from store.tables import DialogTurnRow, OutboxRow
from tests.harness import Harness, Stack, running_worker


async def test_agent_replies_and_the_dialog_is_stored(harness: Harness) -> None:
    agent = await harness.create_agent()
    receipt = await harness.say(agent.handle, "hello there")

    assert receipt.marker is not None
    assert receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == "hello there"  # the scripted model echoes
    async with harness.db.session() as session:
        turns = (
            await session.exec(
                select(DialogTurnRow).where(
                    DialogTurnRow.conversation_id == receipt.marker.conversation_id
                )
            )
        ).all()
        outbox = (
            await session.exec(select(OutboxRow).where(OutboxRow.agent == agent.handle))
        ).all()
    assert [(t.role, t.text) for t in sorted(turns, key=lambda t: t.id)] == [
        ("person", "hello there"),
        ("agent", "hello there"),
    ]
    assert len(outbox) == 1


async def test_a_worker_without_the_sandbox_runs_the_same_pipeline(
    client: Client, stack: Stack
) -> None:
    overrides: dict[str, object] = {"workflow_sandbox": False}
    async with running_worker(client, stack, settings_overrides=overrides) as harness:
        assert isinstance(harness.worker.config().get("workflow_runner"), UnsandboxedWorkflowRunner)
        agent = await harness.create_agent()
        first = await harness.say(agent.handle, "first")
        second = await harness.say(agent.handle, "second")

    assert first.marker is not None and second.marker is not None
    assert (first.marker.text, second.marker.text) == ("first", "second")
    assert first.marker.conversation_id == second.marker.conversation_id


def test_the_sandbox_is_on_unless_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().workflow_sandbox is True
    monkeypatch.setenv("PERSYN_WORKFLOW_SANDBOX", "false")
    assert Settings().workflow_sandbox is False
    monkeypatch.setenv("PERSYN_WORKFLOW_SANDBOX", "sometimes")
    with pytest.raises(ValidationError, match="workflow_sandbox"):
        Settings()


@pytest.mark.parametrize("value", ["-1", "soon", "1e999999"])
def test_a_bad_worker_startup_wait_names_the_setting(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("PERSYN_WORKER_STARTUP_WAIT_SECONDS", value)
    with pytest.raises(ValidationError, match="worker_startup_wait_seconds"):
        Settings()
