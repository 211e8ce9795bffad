"""Providers built from settings; each provider's SDK is imported only when it is used."""

from __future__ import annotations

from urllib.parse import urlsplit

from activities.gateway.base import Provider
from activities.gateway.providers.scripted import Script, ScriptedProvider
from contract.provider_errors import ProviderUnavailableError
from schemas.local_model import base_url
from schemas.models import ProviderName
from schemas.settings import Settings

KEPT_SCRIPTED_REQUESTS = 100
"""Requests a worker's scripted provider keeps for inspection; nothing reads more."""


LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
"""Host names of this machine's own loopback interface."""


def on_this_machine(url: str) -> bool:
    """Whether ``url`` names a server on this machine (a loopback address)."""
    return (urlsplit(url).hostname or "") in LOOPBACK


def build_provider(name: ProviderName, settings: Settings) -> Provider:
    """The provider ``name`` configured from ``settings``.

    Raises:
        ProviderUnavailableError: Its optional dependency is missing; the message says which.
    """
    if name is ProviderName.SCRIPTED:
        script = Script.load(settings.scripted_script) if settings.scripted_script else None
        return ScriptedProvider(script, keep_requests=KEPT_SCRIPTED_REQUESTS)
    if name is ProviderName.ANTHROPIC:
        from activities.gateway.providers.anthropic import AnthropicProvider

        assert settings.anthropic_api_key is not None
        return AnthropicProvider(
            api_key=settings.anthropic_api_key.get_secret_value(),
            base_url=settings.anthropic_base_url,
            timeout_seconds=settings.model_timeout_seconds,
        )
    if name is ProviderName.OPENAI_COMPATIBLE:
        from activities.gateway.lanes import ModelLanes
        from activities.gateway.providers.compatible import CompatibleProvider, StructuredDialect

        assert settings.openai_base_url is not None  # the registry refuses the provider without
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        structured = settings.openai_compatible_structured
        return CompatibleProvider(
            api_key=key or "not-needed",
            base_url=settings.openai_base_url,
            timeout_seconds=settings.model_timeout_seconds,
            dialect=None if structured == "auto" else StructuredDialect(structured),
            # A server on this machine (Ollama, LM Studio, llama.cpp) mostly answers one call
            # at a time: a reply goes before memory formation and the other background work.
            lanes=ModelLanes() if on_this_machine(settings.openai_base_url) else None,
        )
    if name is ProviderName.OPENAI:
        from activities.gateway.providers.openai import OpenAIProvider

        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return OpenAIProvider(
            api_key=key or "not-needed",
            base_url=None,
            timeout_seconds=settings.model_timeout_seconds,
            provider=name,
        )
    if name is ProviderName.LOCAL:
        # The model runs in its own server process (``persyn up`` supervises it); the
        # worker only speaks HTTP to it, so llama.cpp is never imported here.
        from activities.gateway.providers.local import LocalProvider

        return LocalProvider(
            base_url=base_url(settings), timeout_seconds=settings.model_timeout_seconds
        )
    raise ProviderUnavailableError(f"unknown provider {name}")
