"""A smoke test against the real paid providers, run only where an API key is configured."""

from __future__ import annotations

import os

import pytest

from activities.gateway.base import Provider
from activities.gateway.providers.anthropic import AnthropicProvider
from activities.gateway.providers.openai import OpenAIProvider
from activities.gateway.registry import ModelRegistry
from schemas.models import ChatMessage, ModelRequest, ProviderName, TaskType
from schemas.settings import Settings
from tests.gateway.conftest import Deltas


def build(name: ProviderName, key: str) -> Provider:
    if name is ProviderName.ANTHROPIC:
        return AnthropicProvider(key, None, timeout_seconds=60)
    return OpenAIProvider(key, None, timeout_seconds=60, provider=name)


@pytest.mark.live_provider
@pytest.mark.parametrize(
    ("name", "variable"),
    [
        pytest.param(
            ProviderName.ANTHROPIC,
            "ANTHROPIC_API_KEY",
            marks=pytest.mark.skipif(
                not os.environ.get("ANTHROPIC_API_KEY"),
                reason="ANTHROPIC_API_KEY is not set: no live Anthropic call",
            ),
        ),
        pytest.param(
            ProviderName.OPENAI,
            "OPENAI_API_KEY",
            marks=pytest.mark.skipif(
                not os.environ.get("OPENAI_API_KEY"),
                reason="OPENAI_API_KEY is not set: no live OpenAI call",
            ),
        ),
    ],
)
async def test_a_live_provider_answers_streams_and_counts_usage(
    name: ProviderName, variable: str
) -> None:
    settings = Settings(provider=name.value, **{f"{name.value}_api_key": os.environ[variable]})  # type: ignore[arg-type]
    binding = ModelRegistry.from_settings(settings).binding(TaskType.CLASSIFY)
    provider = build(name, os.environ[variable])
    deltas = Deltas()
    try:
        response = await provider.complete(
            ModelRequest(
                task=TaskType.CLASSIFY,
                system="You answer with a single word.",
                messages=[ChatMessage(role="user", content="What colour is a clear daytime sky?")],
                max_output_tokens=16,
            ),
            binding,
            on_delta=deltas,
        )
    finally:
        await provider.aclose()

    assert response.text.strip()
    assert "".join(deltas.pieces) == response.text
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0
