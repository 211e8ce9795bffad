"""``persyn inbox`` shows each message's delivery state, and failed ones visibly."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
import typer
from temporalio.client import Client
from typer.testing import CliRunner

from activities.channels.adapters.base import DeliveryError
from cli.inbox import inbox
from schemas.delivery import DeliveryStatus
from schemas.events import ChannelRef
from schemas.settings import get_settings
from tests.channels.helpers import CueAdapter, channel_worker, outbox_row, queue_unprompted
from tests.harness import Harness, Stack, terminal, until


@pytest.fixture
def settings_env(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


async def _settled(harness: Harness, message_id: str, status: DeliveryStatus) -> None:
    async def reached() -> bool:
        row = await outbox_row(harness, message_id)
        return row is not None and row.status == status

    await until(reached)


async def _inbox(*args: str) -> str:
    app = typer.Typer()
    app.command()(inbox)
    result = await asyncio.to_thread(CliRunner().invoke, app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


async def test_the_inbox_shows_delivery_states_and_lists_failures(
    client: Client, stack: Stack, settings_env: None
) -> None:
    pager = CueAdapter("pager", errors=[DeliveryError("no pager answers", retryable=False)])
    async with channel_worker(client, stack, adapters=[pager]) as harness:
        handle = (await harness.create_agent()).handle
        kept = await queue_unprompted(harness, handle, terminal(), "Kept for you.")
        lost = await queue_unprompted(
            harness, handle, ChannelRef(service="pager", channel="night"), "Wake up."
        )
        await _settled(harness, kept, DeliveryStatus.AWAITING_PICKUP)
        await _settled(harness, lost, DeliveryStatus.FAILED)

    lines = [json.loads(line) for line in (await _inbox("--agent", handle, "--json")).splitlines()]
    assert [(m["id"], m["status"]) for m in lines] == [
        (kept, "awaiting_pickup"),
        (lost, "failed"),
    ]
    assert "no pager answers" in lines[1]["last_error"]

    text = await _inbox("--agent", handle, "--failed")
    assert lost in text and kept not in text
    assert "[FAILED: no pager answers" in text
