"""A stage the call plan skips does not run: no critique or refinement on the local model."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.deliberation.parking import DeliberationActivities
from activities.gateway.registry import ModelRegistry
from schemas.agents import DeliberationMode
from schemas.deliberation import DeliberationPlanInput, DeliberationSettings
from schemas.events import ChannelRef
from schemas.models import TaskType
from schemas.settings import Settings
from store.db import Database
from store.embedded import EmbeddedPostgres

CHANNEL = ChannelRef(service="terminal", channel="tty")
CANDIDATE = (
    "Tide pools hold crabs, anemones and starfish; the water is refreshed by every tide, "
    "and the creatures that live there cope with heat, waves and birds all day long."
)


@pytest.fixture(scope="module")
async def db(postgres: EmbeddedPostgres) -> AsyncIterator[Database]:
    database = Database(postgres.dsn, pool_size=2)
    yield database
    await database.aclose()


@pytest.mark.parametrize(
    "provider,expected",
    [("local", DeliberationMode.OFF), ("scripted", DeliberationMode.INLINE)],
)
async def test_the_deliberation_plan_follows_the_critics_call_plan(
    db: Database, provider: str, expected: DeliberationMode
) -> None:
    registry = ModelRegistry.from_settings(Settings(provider=provider))  # type: ignore[arg-type]
    settings = DeliberationSettings(channels={CHANNEL.key: DeliberationMode.INLINE})
    activities = DeliberationActivities(
        db, settings, critique_runs=registry.runs(TaskType.CRITIQUE)
    )

    plan = await activities.plan(
        DeliberationPlanInput(agent="nobody-here", channel=CHANNEL, candidate=CANDIDATE)
    )

    assert plan.mode is expected
