"""A real critic against a real paid provider, run only where an API key is configured."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

from activities.deliberation.critique import CritiqueActivities
from activities.gateway.factory import build_provider
from activities.gateway.gateway import ModelGateway
from activities.gateway.registry import ModelRegistry
from schemas.deliberation import CritiqueInput, CritiqueStatus, DeliberationSettings, Lens
from schemas.ids import new_ulid
from schemas.models import ChatMessage
from schemas.settings import Settings
from store.db import Database
from store.queries.runtime import save_prompt
from tests.harness import Stack

KEY = next((v for v in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY") if os.environ.get(v)), None)


@pytest.mark.live_provider
@pytest.mark.skipif(
    KEY is None, reason="neither ANTHROPIC_API_KEY nor OPENAI_API_KEY is set: no live critic call"
)
async def test_a_live_provenance_critic_objects_to_a_confabulated_memory(stack: Stack) -> None:
    assert KEY is not None
    provider = "anthropic" if KEY == "ANTHROPIC_API_KEY" else "openai"
    settings = Settings(provider=provider, **{f"{provider}_api_key": os.environ[KEY]})  # type: ignore[arg-type]
    registry = ModelRegistry.from_settings(settings)
    gateway = ModelGateway(registry, {n: build_provider(n, settings) for n in registry.providers()})
    db = Database(stack.dsn)
    prompt_id = new_ulid()
    try:
        await save_prompt(
            db.lane,
            prompt_id=prompt_id,
            activation_id=None,
            task="respond",
            system="You are Wren, a careful agent. No memories were retrieved for this turn.",
            messages=[ChatMessage(role="user", content="Do you remember our trip to Oslo?")],
            token_estimate=40,
            created_at=datetime.now(UTC),
            extra={"memory": {"mode": "semantic", "records": []}},
        )
        critic = CritiqueActivities(db, gateway, DeliberationSettings())
        critique = await critic.critique(
            CritiqueInput(
                prompt_id=prompt_id,
                candidate="Of course! I remember our Oslo trip vividly, especially the fjord tour "
                "we took together last spring.",
                lens=Lens.PROVENANCE,
            )
        )
    finally:
        await gateway.aclose()
        await db.aclose()

    assert critique.status is not CritiqueStatus.FAILED, critique.note
    assert critique.objections, "a memory with no record behind it must draw an objection"
    assert any(o.type in {"confabulation", "overclaiming"} for o in critique.objections)
