"""The worker warms the encoder and a local model before the first message, unmetered."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from activities.gateway.gateway import ModelGateway
from activities.gateway.providers.local import LocalProvider
from activities.gateway.providers.scripted import ScriptedProvider
from activities.gateway.registry import ModelRegistry
from contract.provider_errors import ProviderServerError
from observability.metering.hub import MeterHub
from schemas.models import (
    ModelBinding,
    ModelRequest,
    ModelResponse,
    ProviderName,
    TaskType,
    UsageRecord,
)
from schemas.settings import Settings
from workers.warm import warm


@dataclass
class CountingEncoder:
    name: str = "counting"
    dimensions: int = 3
    texts: list[str] = field(default_factory=list)

    async def encode(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return [[1.0, 0.0, 0.0] for _ in texts]

    async def aclose(self) -> None:
        return None


@dataclass
class Recorder:
    name: str = "recorder"
    records: list[UsageRecord] = field(default_factory=list)

    async def record(self, usage: UsageRecord) -> None:
        self.records.append(usage)

    async def aclose(self) -> None:
        return None


class Failing(ScriptedProvider):
    async def complete(
        self, request: ModelRequest, binding: ModelBinding, **_: object
    ) -> ModelResponse:
        raise ProviderServerError("the model server is still loading")


def gateway_on(
    provider: ProviderName, serving: ScriptedProvider, hub: MeterHub | None = None
) -> ModelGateway:
    # As the registry builds them: one model, a tier and a window per task.
    settings = Settings(provider="local")
    built = ModelRegistry.from_settings(settings).bindings
    bindings = {task: b.model_copy(update={"provider": provider}) for task, b in built.items()}
    return ModelGateway(ModelRegistry(bindings=bindings), {provider: serving}, meters=hub)


@pytest.mark.parametrize("provider", [ProviderName.LOCAL, ProviderName.OPENAI_COMPATIBLE])
async def test_a_model_on_this_machine_answers_one_token_at_background_priority_unmetered(
    provider: ProviderName,
) -> None:
    served, meter, encoder = ScriptedProvider(), Recorder(), CountingEncoder()
    hub = MeterHub([meter])

    warmed = await warm(gateway_on(provider, served, hub), encoder)
    await hub.flush()

    assert warmed == ["encoder", "model"]
    assert encoder.texts == ["Hello."]
    [request] = served.requests
    assert request.max_output_tokens == 1
    # A background task: a message that arrives first is answered first.
    assert request.task is TaskType.CLASSIFY
    assert meter.records == []


async def test_a_hosted_model_is_never_called_to_warm_it() -> None:
    served = ScriptedProvider()

    warmed = await warm(gateway_on(ProviderName.ANTHROPIC, served), CountingEncoder())

    assert warmed == ["encoder"]
    assert served.requests == []


async def test_a_model_whose_background_tasks_run_elsewhere_is_not_warmed() -> None:
    served = ScriptedProvider()
    local = ModelBinding(provider=ProviderName.LOCAL, model="small", context_window=8192)
    bindings = dict.fromkeys(TaskType, local)
    bindings[TaskType.CLASSIFY] = local.model_copy(update={"model": "other"})
    gateway = ModelGateway(ModelRegistry(bindings=bindings), {ProviderName.LOCAL: served})

    assert await warm(gateway, None) == []
    assert served.requests == []


async def test_a_model_server_that_fails_leaves_the_worker_serving() -> None:
    warmed = await warm(gateway_on(ProviderName.LOCAL, Failing()), CountingEncoder())

    assert warmed == ["encoder"]


@pytest.mark.local_model
async def test_the_built_in_model_server_is_warmed_for_real(local_model_server: str) -> None:
    binding = ModelBinding(provider=ProviderName.LOCAL, model="smollm2", context_window=8192)
    provider = LocalProvider(base_url=local_model_server, timeout_seconds=60)
    gateway = ModelGateway(
        ModelRegistry(bindings=dict.fromkeys(TaskType, binding)), {ProviderName.LOCAL: provider}
    )
    try:
        assert await warm(gateway, None) == ["model"]
    finally:
        await gateway.aclose()
