"""``persyn converse --wait`` follows two agents until they stop, and says why."""

from __future__ import annotations

import asyncio
import json

import pytest
import typer
from temporalio.client import Client
from typer.testing import CliRunner

from cli.converse import converse
from schemas.settings import get_settings
from tests.channels.helpers import channel_worker
from tests.channels.test_converse import FAST_PACING, GARDEN
from tests.harness import Stack


async def test_converse_follows_the_exchange_and_names_why_it_stopped(
    client: Client, stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    overrides: dict[str, object] = {"pacing": FAST_PACING}
    async with channel_worker(client, stack, rules=GARDEN, settings_overrides=overrides) as harness:
        first = (await harness.create_agent(name="Ada")).handle
        second = (await harness.create_agent(name="Bo")).handle
        for name, value in {
            "PERSYN_HOME": str(stack.home),
            "PERSYN_DATABASE_URL": stack.dsn,
            "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
            "PERSYN_TASK_QUEUE": harness.task_queue,
        }.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        app = typer.Typer()
        app.command()(converse)
        runner = CliRunner()
        try:
            args = [first, second, "--opening", "Let's plan a garden this spring.", "--wait"]
            result = await asyncio.to_thread(runner.invoke, app, [*args, "--json"])
            refused = await asyncio.to_thread(
                runner.invoke, app, [first, first, "--opening", "Hello me."]
            )
        finally:
            get_settings.cache_clear()

    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [line["from"] for line in lines[:-1]] == [first, second, first, second]
    assert lines[-1]["stopped"] == "silence" and "only agrees" in lines[-1]["reason"]
    assert refused.exit_code == 1
    assert "does not converse with itself" in refused.output
