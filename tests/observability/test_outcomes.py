"""Outcomes that tell the truth: a fallback reply is ``degraded``, a terminated turn ``failed``.

Everything runs on the real Temporal and PostgreSQL; only the model is scripted (it refuses
the credentials, as a provider with a bad key does).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import typer
from temporalio.client import Client, WorkflowExecutionStatus
from typer.testing import CliRunner

import cli.talk
from activities.gateway.providers.scripted import ScriptRule
from cli.trace import trace
from contract import names
from schemas.activation import FALLBACK_REPLY
from schemas.events import Outcome, Receipt
from schemas.settings import Settings
from store.queries.runtime import get_marker
from tests.harness import Harness, Stack, event, until
from tests.observability.helpers import finished, traced_worker

runner = CliRunner()
REFUSED = [ScriptRule(task="respond", fail="auth")]


async def outcome_attribute(client: Client, activation_id: str) -> str | None:
    handle = client.get_workflow_handle(names.activation_workflow_id(activation_id))
    described = await handle.describe()
    return described.typed_search_attributes.get(names.OUTCOME)


async def test_a_fallback_reply_is_degraded_in_the_marker_the_ui_and_the_trace(
    stack: Stack, tmp_path: Path
) -> None:
    spans = tmp_path / "spans.jsonl"
    async with traced_worker(stack, spans, content="metadata", rules=REFUSED) as (harness, traced):
        agent = await harness.create_agent()
        receipt = await harness.say(agent.handle, "are you there?")
        marker = receipt.marker
        assert marker is not None and marker.activation_id is not None
        await finished(harness.client, marker.activation_id)
        attribute = await outcome_attribute(harness.client, marker.activation_id)
        traced.flush()

    assert marker.outcome is Outcome.DEGRADED
    assert marker.degraded and marker.text == FALLBACK_REPLY
    assert marker.reason is not None and "model provider" in marker.reason
    assert attribute == "degraded"

    shown = runner.invoke(cli_app(trace), [marker.activation_id, "--file", str(spans)])
    assert shown.exit_code == 0, shown.output
    assert "outcome=DEGRADED" in shown.output.splitlines()[0]


async def test_send_marks_a_degraded_reply_and_exits_3(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.provider.script.rules[:] = REFUSED
    agent = await harness.create_agent(name="Ada")
    receipt = await harness.say(agent.handle, "hello?")

    async def answered(settings: Settings, handle: str, _: object) -> tuple[Receipt, str]:
        return receipt, "Ada"  # the real receipt of the turn above

    monkeypatch.setattr(cli.talk, "_send", answered)
    # In a thread: the command runs its own event loop, as it does from a shell.
    shown = await asyncio.to_thread(
        runner.invoke, cli_app(cli.talk.send), ["hello?", "--agent", agent.handle]
    )

    assert shown.exit_code == 3
    lines = shown.output.splitlines()
    assert lines[0] == f"Ada> {FALLBACK_REPLY}"
    assert lines[1].startswith("[degraded: ") and "model provider" in lines[1]


async def test_a_terminated_activation_fails_with_the_operators_reason(harness: Harness) -> None:
    harness.provider.script.rules[:] = [ScriptRule(task="respond", delay_ms=60_000, reply="late")]
    agent = await harness.create_agent()
    ev = event("take your time")
    submitted = asyncio.ensure_future(harness.send(agent.handle, ev))

    running: list[str] = []

    async def activation_started() -> bool:
        query = f"WorkflowType='ActivationWorkflow' AND PersynAgent='{agent.handle}'"
        running[:] = [w.id async for w in harness.client.list_workflows(query)]
        return bool(running)

    await until(activation_started)
    handle = harness.client.get_workflow_handle(running[0])
    await handle.terminate(reason="stuck on a slow model; retry later")

    receipt = await asyncio.wait_for(submitted, 60)
    marker = receipt.marker
    assert marker is not None
    assert marker.outcome is Outcome.FAILED
    assert marker.reason is not None and "stuck on a slow model; retry later" in marker.reason
    assert "terminated" in marker.reason
    assert (await handle.describe()).status is WorkflowExecutionStatus.TERMINATED
    async with harness.db.session() as session:
        stored = await get_marker(session, event_id=ev.event_id, now=datetime.now(UTC))
    assert stored is not None and stored.outcome is Outcome.FAILED
    assert stored.reason == marker.reason


def cli_app(command: Callable[..., None]) -> typer.Typer:
    """One command mounted as ``persyn`` mounts it."""
    app = typer.Typer()
    app.command()(command)
    return app
