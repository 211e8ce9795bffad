"""Tracing is on by default on the embedded stack: ``persyn trace`` works with no setting."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cli.trace import trace
from observability import tracing
from schemas.settings import Settings, get_settings
from temporal.client import connect
from tests.harness import Stack, running_worker
from tests.observability.helpers import finished

runner = CliRunner()


def test_the_embedded_stack_traces_to_its_span_file_with_metadata_only(tmp_path: Path) -> None:
    embedded = Settings(home=tmp_path, embedded=True)
    assert embedded.tracing_exporters == ["file"]
    assert embedded.tracing_content == "metadata"
    assert embedded.span_file == tmp_path / "traces" / "spans.jsonl"
    # An external database means a production-shaped deployment: tracing stays opt-in.
    assert Settings(home=tmp_path, database_url="postgresql://db/persyn").tracing_exporters == []


def test_an_empty_setting_turns_tracing_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERSYN_TRACING_EXPORTERS", "")
    assert Settings(home=tmp_path, embedded=True).tracing_exporters == []


async def test_persyn_trace_shows_a_turn_with_no_tracing_setting(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    overrides: dict[str, object] = {"home": tmp_path, "embedded": True}
    settings = stack.settings(**overrides)
    client = await connect(settings, address=stack.temporal_address)
    traced = tracing.setup(settings)
    assert traced is not None and not traced.full
    try:
        async with running_worker(client, stack, settings_overrides=overrides) as harness:
            agent = await harness.create_agent()
            receipt = await harness.say(agent.handle, "what is the tide doing")
            assert receipt.marker is not None and receipt.marker.activation_id is not None
            activation = receipt.marker.activation_id
            await finished(client, activation)
    finally:
        traced.close()

    monkeypatch.setenv("PERSYN_HOME", str(tmp_path))
    get_settings.cache_clear()
    app = typer.Typer()
    app.command()(trace)
    try:
        shown = await asyncio.to_thread(runner.invoke, app, [activation])
    finally:
        get_settings.cache_clear()
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].startswith(f"activation {activation}") and "outcome=spoke" in lines[0]
    assert any("model:respond" in line for line in lines)
    assert "what is the tide doing" not in shown.output  # metadata: no conversation text
