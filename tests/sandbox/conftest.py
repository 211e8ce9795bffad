"""A provider per test on the session's private engine, torn down with its agent."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from activities.sandbox.docker import DockerProvider
from schemas.sandbox import SandboxSettings
from tests.harness import unique
from tests.sandbox.engine import DockerEngine

MakeProvider = Callable[..., DockerProvider]


@pytest.fixture
async def make_provider(docker_engine: DockerEngine) -> AsyncIterator[MakeProvider]:
    """Build providers with settings overrides; every agent they served is torn down after."""
    made: list[tuple[DockerProvider, set[str]]] = []

    def make(**overrides: Any) -> DockerProvider:
        defaults = {"docker_host": docker_engine.host, "image": docker_engine.image}
        settings = SandboxSettings.model_validate({**defaults, **overrides})
        provider = _Tracking(settings)
        made.append((provider, provider.agents))
        return provider

    yield make
    for provider, agents in made:
        for agent in agents:
            await provider.teardown(agent)
        await provider.close()


@pytest.fixture
def agent() -> str:
    return unique("Sandboxed")


class _Tracking(DockerProvider):
    """Remembers the agents it provisioned, so the fixture can tear each down."""

    def __init__(self, settings: SandboxSettings) -> None:
        super().__init__(settings)
        self.agents: set[str] = set()

    async def provision(self, agent: str) -> None:
        self.agents.add(agent)
        await super().provision(agent)

    async def _container(self, agent: str) -> Any:
        self.agents.add(agent)
        return await super()._container(agent)
