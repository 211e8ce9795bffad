"""Pacing decisions on the real PostgreSQL: budget (from the usage ledger), turn limit, waits,
per-agent overrides."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from typer.testing import CliRunner

from cli.pacing import app
from schemas.delivery import PacingSettings
from schemas.ids import new_ulid, ulid_from_parts
from schemas.models import UsageRecord
from schemas.settings import get_settings
from store.queries.delivery import pace, pacing_for, set_pacing
from store.queries.ledger import add_usage
from store.queries.runtime import add_outbox
from tests.harness import Harness, Stack

SETTINGS = PacingSettings(
    budget_tokens=30,
    min_interval_seconds=10,
    listen_seconds=1,
    jitter_seconds=0,
    acceleration_factor=2,
    max_wait_seconds=100,
)


async def _message(harness: Harness, agent: str, text: str, at: datetime) -> str:
    message_id = ulid_from_parts(at, int.from_bytes(new_ulid().encode()[-10:], "big"))
    async with harness.db.session() as session:
        await add_outbox(
            session,
            message_id=message_id,
            activation_id=message_id,
            agent=agent,
            channel_key="agent:bo",
            conversation_id=None,
            text_=text,
            created_at=at,
        )
    return message_id


async def _spend(harness: Harness, agent: str, tokens: int, activation: str, at: datetime) -> None:
    """A model call of ``activation`` on ``agent:bo``, as the gateway's ledger records it."""
    await add_usage(
        harness.db.lane,
        usage=UsageRecord(
            record_id=new_ulid(),
            stage="respond",
            provider="scripted",
            model="scripted",
            input_tokens=tokens - 5,
            output_tokens=5,
            agent=agent,
            channel="agent:bo",
            activation=activation,
            occurred_at=at,
        ),
    )


async def test_waits_grow_as_an_exchange_speeds_up_and_the_budget_blocks(
    harness: Harness,
) -> None:
    agent = (await harness.create_agent()).handle
    now = datetime.now(UTC)
    decided = []
    # Generated 60 s then 5 s apart: the exchange is speeding up. Each message's generation
    # cost 10 model tokens: its own cost never refuses it, but by the last the budget is spent.
    texts = ((0, "one two three"), (60, "four five six"), (65, "seven"), (70, "eight"))
    for offset, text in texts:
        message = await _message(harness, agent, text, now + timedelta(seconds=offset))
        await _spend(harness, agent, 10, message, now + timedelta(seconds=offset - 1))
        async with harness.db.session() as session:
            decided.append(
                await pace(
                    session,
                    message_id=message,
                    settings=SETTINGS,
                    now=now + timedelta(seconds=offset),
                )
            )
        if offset == 70:
            # A retried decision answers the same.
            async with harness.db.session() as session:
                again = await pace(
                    session, message_id=message, settings=SETTINGS, now=now + timedelta(seconds=71)
                )
            assert again.blocked == decided[-1].blocked

    assert decided[0].blocked is None and decided[0].wait_seconds == pytest.approx(1)
    assert decided[1].wait_seconds == pytest.approx(1)  # the interval has long passed
    # Its gap shrank from 60 s to 5 s: twice the interval after the previous one went (at 61).
    assert decided[2].wait_seconds == pytest.approx(61 + 2 * 10 - 65)
    assert (
        decided[3].blocked is not None and "token budget exhausted: 30 of 30" in decided[3].blocked
    )


async def test_overrides_per_agent_and_channel_and_the_command(
    harness: Harness, stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = (await harness.create_agent()).handle
    async with harness.db.session() as session:
        await set_pacing(
            session,
            agent=agent,
            channel_key="*",
            values={"budget_tokens": "900"},
            at=datetime.now(UTC),
        )
        await set_pacing(
            session,
            agent=agent,
            channel_key="agent:bo",
            values={"max_messages": 4},
            at=datetime.now(UTC),
        )
        bo = await pacing_for(session, agent=agent, channel_key="agent:bo", defaults=SETTINGS)
        other = await pacing_for(session, agent=agent, channel_key="agent:cy", defaults=SETTINGS)
    assert (bo.budget_tokens, bo.max_messages, bo.listen_seconds) == (900, 4, 1)
    assert (other.budget_tokens, other.max_messages) == (900, None)

    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        result = await asyncio.to_thread(
            runner.invoke,
            app,
            ["set", "--agent", agent, "--channel", "agent:bo", "max_messages=none"],
        )
        assert result.exit_code == 0, result.output
        assert "max_messages" in result.output and "None" in result.output
        bad = await asyncio.to_thread(runner.invoke, app, ["set", "--agent", agent, "speed=11"])
        assert bad.exit_code == 1 and "not name=value with a name among" in bad.output
    finally:
        get_settings.cache_clear()
