"""The scripted provider a worker builds from settings keeps a bounded record of its requests."""

from __future__ import annotations

from activities.gateway.factory import KEPT_SCRIPTED_REQUESTS, build_provider
from activities.gateway.providers.scripted import ScriptedProvider
from schemas.models import ChatMessage, ProviderName
from schemas.settings import Settings
from tests.gateway.conftest import binding, request


async def test_a_long_run_keeps_only_the_latest_requests() -> None:
    provider = ScriptedProvider(keep_requests=3)
    for n in range(20):
        await provider.complete(
            request(messages=[ChatMessage(role="user", content=f"message {n}")]),
            binding(ProviderName.SCRIPTED),
        )
    assert 3 <= len(provider.requests) <= 6
    assert provider.requests[-1].messages[-1].content == "message 19"


async def test_a_provider_built_for_a_test_keeps_every_request() -> None:
    provider = ScriptedProvider()
    for _ in range(10):
        await provider.complete(request(), binding(ProviderName.SCRIPTED))
    assert len(provider.requests) == 10


async def test_the_workers_scripted_provider_is_bounded() -> None:
    provider = build_provider(ProviderName.SCRIPTED, Settings(provider="scripted"))
    assert isinstance(provider, ScriptedProvider)
    for _ in range(2 * KEPT_SCRIPTED_REQUESTS + 5):
        await provider.complete(request(), binding(ProviderName.SCRIPTED))
    assert len(provider.requests) <= 2 * KEPT_SCRIPTED_REQUESTS
