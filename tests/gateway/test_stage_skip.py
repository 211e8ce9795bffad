"""A stage the call plan skips does not run: no critique, refinement or judge on the local model."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.deliberation.judge import JudgeActivities
from activities.deliberation.parking import DeliberationActivities
from activities.gateway.gateway import ModelGateway
from activities.gateway.plans import local_plan
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from activities.gateway.registry import ModelRegistry
from schemas.agents import DeliberationMode
from schemas.deliberation import (
    DeliberationPlanInput,
    DeliberationSettings,
    JudgeInput,
    SpeakBasis,
)
from schemas.events import ChannelRef, InboundEvent, Speaker
from schemas.ids import new_ulid
from schemas.models import ModelBinding, ProviderName, TaskType
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
    registry = ModelRegistry.from_settings(Settings(provider=provider))
    settings = DeliberationSettings(channels={CHANNEL.key: DeliberationMode.INLINE})
    activities = DeliberationActivities(
        db, settings, critique_runs=registry.runs(TaskType.CRITIQUE)
    )

    plan = await activities.plan(
        DeliberationPlanInput(agent="nobody-here", channel=CHANNEL, candidate=CANDIDATE)
    )

    assert plan.mode is expected


async def test_the_decide_judgment_follows_the_rule_when_the_plan_skips_it(db: Database) -> None:
    provider = ScriptedProvider(Script(rules=[ScriptRule(reply='{"speak": false, "reason": "x"}')]))
    binding = ModelBinding(provider=ProviderName.SCRIPTED, model="small", context_window=8192)
    registry = ModelRegistry(
        bindings=dict.fromkeys(TaskType, binding), plans={ProviderName.SCRIPTED: local_plan()}
    )
    judge = JudgeActivities(db, ModelGateway(registry, {ProviderName.SCRIPTED: provider}))
    event = InboundEvent(
        event_id=new_ulid(), channel=CHANNEL, speaker=Speaker(speaker_id="sam"), text="Hi Ava?"
    )

    verdict = await judge.judge(JudgeInput(agent="nobody-here", event=event, candidate="Hi!"))

    assert verdict.speak and verdict.basis is SpeakBasis.FALLBACK
    assert provider.requests == []  # no model was asked
