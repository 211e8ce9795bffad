"""Provider-executed web search: off by default, and with the setting on, the request to the
provider's wire server advertises it (Anthropic) or leaves it out (OpenAI Chat Completions)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from activities.gateway.providers.anthropic import AnthropicProvider
from activities.gateway.providers.openai import OpenAIProvider
from activities.tools.registry import ToolRegistry
from activities.tools.web import availability, build_web
from schemas.models import ProviderName
from schemas.settings import Settings
from schemas.web import WebSettings
from tests.fakes.provider_server import FakeProviderServer
from tests.gateway.conftest import binding, request


@pytest.fixture
def fake() -> Iterator[FakeProviderServer]:
    with FakeProviderServer(reply="Searched.") as server:
        yield server


def _registry(settings: Settings) -> ToolRegistry:
    web = build_web(settings)
    return ToolRegistry(web.tools, web.provider_tools)


async def test_with_the_setting_on_anthropic_is_offered_its_search_tool(
    tmp_path: Path, fake: FakeProviderServer
) -> None:
    settings = Settings(home=tmp_path, web=WebSettings(search=True, search_max_uses=2))
    provider = AnthropicProvider("test-key", fake.url, timeout_seconds=5.0)
    try:
        specs = _registry(settings).specs(ProviderName.ANTHROPIC)
        await provider.complete(request(tools=specs), binding(ProviderName.ANTHROPIC))
    finally:
        await provider.aclose()

    tools = fake.requests[0].body["tools"]
    search = [t for t in tools if t.get("name") == "web_search"]
    assert len(search) == 1
    assert search[0]["type"] == "web_search_20250305" and search[0]["max_uses"] == 2
    assert "input_schema" not in search[0]  # a server tool goes by its type, not a schema


async def test_off_by_default_nothing_is_advertised(
    tmp_path: Path, fake: FakeProviderServer
) -> None:
    settings = Settings(home=tmp_path)
    assert "web_search" not in _registry(settings).names()
    provider = AnthropicProvider("test-key", fake.url, timeout_seconds=5.0)
    try:
        specs = _registry(settings).specs(ProviderName.ANTHROPIC)
        await provider.complete(request(tools=specs), binding(ProviderName.ANTHROPIC))
    finally:
        await provider.aclose()

    assert "web_search" not in [t.get("name") for t in fake.requests[0].body.get("tools", [])]


@pytest.mark.parametrize(
    ("model", "sent"),
    [("gpt-4o-search-preview", {"search_context_size": "medium"}), ("gpt-4o", None)],
)
async def test_openai_search_models_get_the_search_option_and_other_models_nothing(
    tmp_path: Path, fake: FakeProviderServer, model: str, sent: dict[str, str] | None
) -> None:
    settings = Settings(home=tmp_path, web=WebSettings(search=True))
    provider = OpenAIProvider("test-key", fake.openai_url, timeout_seconds=5.0)
    try:
        specs = _registry(settings).specs(ProviderName.OPENAI)
        await provider.complete(request(tools=specs), binding(ProviderName.OPENAI, model))
    finally:
        await provider.aclose()

    body = fake.requests[0].body
    names = [t["function"]["name"] for t in body.get("tools", [])]
    # Chat Completions runs no tools: search is never advertised as one, only as the option.
    assert "read_url" in names and not {"web_search", "openai_web_search"} & set(names)
    assert body.get("web_search_options") == sent


def test_each_group_says_whether_it_is_offered_and_why_not(tmp_path: Path) -> None:
    off = {
        a.name: a for a in availability(Settings(home=tmp_path, web=WebSettings(read_url=False)))
    }
    assert not off["read_url"].available and "PERSYN_WEB__READ_URL" in off["read_url"].reason
    assert not off["web_search"].available and off["web_search"].source == "provider"
    assert "PERSYN_WEB__SEARCH" in off["openai_web_search"].reason
    assert "PERSYN_WEB__REFERENCE_DIR" in off["lookup_reference"].reason

    missing = WebSettings(reference_dir=tmp_path / "nowhere")
    gone = {a.name: a for a in availability(Settings(home=tmp_path, web=missing))}
    assert "does not exist" in gone["lookup_reference"].reason
    assert [t.name for t in build_web(Settings(home=tmp_path, web=missing)).tools] == ["read_url"]


def test_a_missing_extractor_leaves_its_tools_absent_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def without_trafilatura(name: str, *args: Any) -> Any:
        return None if name == "trafilatura" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_trafilatura)
    settings = Settings(home=tmp_path, web=WebSettings(reference_dir=tmp_path, search=True))

    rows = {a.name: a for a in availability(settings)}
    assert rows["read_url"].reason == "trafilatura is not installed (pip install trafilatura)"
    assert not rows["lookup_reference"].available
    web = build_web(settings)
    assert web.tools == []
    assert [s.name for s in web.provider_tools] == ["web_search", "openai_web_search"]
