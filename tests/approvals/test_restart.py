"""The wait survives a restart of every process: the worker, Temporal and PostgreSQL.

Temporal runs as a dev server of the test's own, persisted to a file (the shared one keeps its
state in memory), and the session's PostgreSQL is stopped and started on its data, as the
acceptance week's full restart does. While an activation waits for approval, everything goes
down; when it is back a new worker serves the decision (the tool runs once), or the deadline
that passed while everything was down refuses the call by default.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from contract import names
from schemas.approvals import ApprovalStatus, PendingApproval
from schemas.events import InboundEvent, Outcome, Receipt
from store.embedded import EmbeddedPostgres
from temporal import search_attributes
from temporal.client import connect
from tests.approvals.conftest import BELL, Bell, approvals_worker, waiting
from tests.autonomy.conftest import tool_calls
from tests.autonomy.test_heartbeat import PersistedTemporal
from tests.harness import Harness, Stack, event, unique, until
from usecases import approvals


@pytest.fixture
async def temporal(tmp_path: Path) -> AsyncIterator[PersistedTemporal]:
    server = PersistedTemporal(tmp_path)
    yield server
    server.stop()


async def _client(stack: Stack, temporal: PersistedTemporal) -> Client:
    connected = await connect(stack.settings(), address=temporal.address, ready_within=20)
    await search_attributes.register(connected)
    return connected


async def _asked(
    client: Client,
    stack: Stack,
    temporal: PersistedTemporal,
    *,
    bell: Bell,
    task_queue: str,
    settings: dict[str, Any] | None = None,
    handle: str | None = None,
) -> tuple[str, InboundEvent, PendingApproval]:
    """An agent asked to ring the bell, its call waiting for approval; then the worker stops."""
    async with approvals_worker(
        client,
        stack,
        bell=bell,
        approvals=settings,
        task_queue=task_queue,
        overrides={"temporal_address": temporal.address},
    ) as harness:
        agent = (await harness.create_agent(handle)).handle
        message = event("Please ring the bell.")
        said = asyncio.ensure_future(harness.send(agent, message))
        [asked] = await waiting(harness, agent)
        assert bell.runs == []
        # Ada's submission dies with the servers; she sends it again afterwards (same event).
        said.cancel()
    return agent, message, asked


async def _everything_restarts(
    temporal: PersistedTemporal, postgres: EmbeddedPostgres, *, past: datetime | None = None
) -> None:
    """Temporal and PostgreSQL stop; (if ``past``) stay down until then; both start again."""
    temporal.stop()
    await asyncio.to_thread(postgres.stop)
    if past is not None:
        # The deadline is a real timer on the dev server: it must pass while nothing runs.
        await until(lambda: datetime.now(UTC) > past, timeout=60)
    await asyncio.to_thread(postgres.start)
    temporal.restart()


async def _receipt(harness: Harness, agent: str, message: InboundEvent) -> Receipt:
    """The receipt of the message sent before the restart (the same event, the same update)."""
    return await harness.send(agent, message)


async def test_an_approval_decided_after_a_restart_of_everything_runs_the_tool_once(
    stack: Stack, postgres: EmbeddedPostgres, temporal: PersistedTemporal
) -> None:
    bell = Bell()
    queue = unique("tq")
    client = await _client(stack, temporal)
    agent, message, asked = await _asked(client, stack, temporal, bell=bell, task_queue=queue)

    await _everything_restarts(temporal, postgres)
    client = await _client(stack, temporal)

    async with approvals_worker(
        client,
        stack,
        bell=bell,
        task_queue=queue,
        overrides={"temporal_address": temporal.address},
    ) as harness:
        # It still waits, as recorded and as the Web UI shows it.
        [still] = await approvals.list_approvals(db=harness.db, agent=agent)
        assert (still.approval_id, still.status) == (asked.approval_id, ApprovalStatus.PENDING)
        activation = client.get_workflow_handle(names.activation_workflow_id(asked.activation_id))
        described = await activation.describe()
        assert described.status is WorkflowExecutionStatus.RUNNING
        assert described.typed_search_attributes.get(names.APPROVALS) == [asked.approval_id]

        decision = await approvals.decide_approval(
            db=harness.db,
            client=client,
            approval_id=asked.approval_id,
            approve=True,
            by="Grace",
            why="after the restart",
        )
        receipt = await _receipt(harness, agent, message)
        await activation.result()

        assert decision.approved and decision.decided_by == "Grace"
        assert len(bell.runs) == 1
        [call] = await tool_calls(harness, asked.activation_id)
        assert call.id == bell.runs[0] and not call.is_error
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        assert receipt.marker.text is not None and '"rung":1' in receipt.marker.text
        assert (await activation.describe()).status is WorkflowExecutionStatus.COMPLETED
        [kept] = await approvals.list_approvals(db=harness.db, agent=agent, every_status=True)
        assert (kept.status, kept.decided_by, kept.why) == (
            ApprovalStatus.APPROVED,
            "Grace",
            "after the restart",
        )
        # The same decision again is answered from the record; the bell does not ring twice.
        again = await approvals.decide_approval(
            db=harness.db, client=client, approval_id=asked.approval_id, approve=True, by="Ann"
        )
        assert again == decision and len(bell.runs) == 1


async def test_a_deadline_that_passes_while_everything_is_down_refuses_by_default(
    stack: Stack, postgres: EmbeddedPostgres, temporal: PersistedTemporal
) -> None:
    bell = Bell()
    queue = unique("tq")
    handle = unique("agent")
    settings = {"tools": {BELL: "always"}, "agents": {handle: {"timeout_seconds": 10}}}
    client = await _client(stack, temporal)
    agent, message, asked = await _asked(
        client, stack, temporal, bell=bell, task_queue=queue, settings=settings, handle=handle
    )
    assert (asked.deadline - asked.created_at).total_seconds() == 10

    await _everything_restarts(temporal, postgres, past=asked.deadline)
    back = datetime.now(UTC)
    client = await _client(stack, temporal)

    async with approvals_worker(
        client,
        stack,
        bell=bell,
        task_queue=queue,
        approvals=settings,
        overrides={"temporal_address": temporal.address},
    ) as harness:
        receipt = await _receipt(harness, agent, message)
        activation = client.get_workflow_handle(names.activation_workflow_id(asked.activation_id))
        await activation.result()

        assert bell.runs == []
        [kept] = await approvals.list_approvals(db=harness.db, agent=agent, every_status=True)
        assert (kept.status, kept.decided_by) == (ApprovalStatus.EXPIRED, "default")
        # Decided by the run once it was back, not before everything went down.
        assert kept.decided_at is not None and kept.decided_at >= back
        [call] = await tool_calls(harness, asked.activation_id)
        refusal = {"error": "no decision within 10 s: refused by default"}
        assert call.is_error and json.loads(str(call.result)) == refusal
        # The model read the refusal as the tool's result, and the person got the reply.
        assert receipt.marker is not None and receipt.marker.text is not None
        assert "no decision within 10 s: refused by default" in receipt.marker.text
        with pytest.raises(approvals.DecidedError, match=f"approval {asked.approval_id} expired"):
            await approvals.decide_approval(
                db=harness.db,
                client=client,
                approval_id=asked.approval_id,
                approve=True,
                by="Grace",
            )
        assert bell.runs == []
