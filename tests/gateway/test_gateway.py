"""The model gateway: usage records with implicit attribution, fail-soft meters and sinks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from activities.gateway.base import DeltaCallback, Provider
from activities.gateway.gateway import ModelGateway
from activities.gateway.providers.openai import OpenAIProvider
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from activities.gateway.registry import ModelRegistry
from contract import attribution
from contract.provider_errors import ProviderRateLimitError, ProviderTimeoutError
from observability.metering.hub import MeterHub
from schemas.models import (
    Attribution,
    ModelBinding,
    ModelRequest,
    ModelResponse,
    ModelTier,
    ProviderName,
    TaskType,
    UsageRecord,
)
from tests.fakes import wire
from tests.fakes.provider_server import FakeProviderServer
from tests.gateway.conftest import Deltas, request

WHO = Attribution(
    agent="ada-agent",
    channel="terminal:tty",
    conversation="01JCONVERSATION0000000000",
    activation="01JACTIVATION00000000000000",
)
REPLY = "one two three four five"


class RecordingMeter:
    name = "recording"

    def __init__(self) -> None:
        self.records: list[UsageRecord] = []
        self.called = asyncio.Event()

    async def record(self, usage: UsageRecord) -> None:
        self.called.set()
        self.records.append(usage)

    async def aclose(self) -> None:
        pass


class BrokenMeter(RecordingMeter):
    name = "broken"

    async def record(self, usage: UsageRecord) -> None:
        self.called.set()
        raise RuntimeError("meter backend is down")


class HangingMeter(RecordingMeter):
    name = "hanging"

    async def record(self, usage: UsageRecord) -> None:
        self.called.set()
        await asyncio.Event().wait()  # never answers


class HangingProvider(Provider):
    name = "hanging"

    async def complete(
        self, request: ModelRequest, binding: ModelBinding, *, on_delta: DeltaCallback | None = None
    ) -> ModelResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def registry(provider: ProviderName = ProviderName.SCRIPTED) -> ModelRegistry:
    return ModelRegistry(
        bindings={
            task: ModelBinding(
                provider=provider, model="gpt-4.1-mini", context_window=8192, tier=ModelTier.FAST
            )
            for task in TaskType
        }
    )


def scripted(*rules: ScriptRule) -> ScriptedProvider:
    return ScriptedProvider(Script(rules=[*rules, ScriptRule(reply=REPLY)]))


@pytest.fixture
def bound() -> Iterator[Attribution]:
    token = attribution.use(WHO)
    yield WHO
    attribution.reset(token)


@pytest.fixture
async def meter() -> AsyncIterator[tuple[MeterHub, RecordingMeter]]:
    recording = RecordingMeter()
    hub = MeterHub([recording])
    yield hub, recording
    await hub.aclose()


async def test_one_usage_record_per_call_with_the_bound_attribution(
    meter: tuple[MeterHub, RecordingMeter], bound: Attribution, fake: FakeProviderServer
) -> None:
    hub, recording = meter
    openai = OpenAIProvider("test-key", fake.openai_url, 5.0)
    gateway = ModelGateway(registry(ProviderName.OPENAI), {ProviderName.OPENAI: openai}, meters=hub)
    try:
        response = await gateway.complete(request(task=TaskType.SUMMARIZE))
        await gateway.complete(request(task=TaskType.SUMMARIZE))
    finally:
        await gateway.aclose()
    await hub.flush()

    assert response.text == fake.reply
    assert len(recording.records) == 2
    assert recording.records[0].record_id != recording.records[1].record_id
    record = recording.records[0]
    assert (record.agent, record.channel, record.conversation, record.activation) == (
        WHO.agent,
        WHO.channel,
        WHO.conversation,
        WHO.activation,
    )
    assert (record.stage, record.provider, record.model, record.tier) == (
        "summarize",
        "openai",
        "gpt-4.1-mini",
        ModelTier.FAST,
    )
    assert (
        record.input_tokens,
        record.output_tokens,
        record.cached_read_tokens,
        record.cached_write_tokens,
    ) == (wire.PROMPT_TOKENS, wire.COMPLETION_TOKENS, wire.CACHED_READ, wire.CACHED_WRITE)


async def test_a_failed_call_emits_no_usage_record(
    meter: tuple[MeterHub, RecordingMeter], bound: Attribution
) -> None:
    hub, recording = meter
    provider = scripted(ScriptRule(fail="rate_limit", retry_after=3))
    gateway = ModelGateway(registry(), {ProviderName.SCRIPTED: provider}, meters=hub)

    with pytest.raises(ProviderRateLimitError):
        await gateway.complete(request())
    await hub.flush()

    assert recording.records == []


@pytest.mark.parametrize("broken", [BrokenMeter, HangingMeter])
async def test_a_failing_or_hanging_meter_neither_fails_nor_delays_the_call(
    bound: Attribution, broken: type[RecordingMeter]
) -> None:
    bad, good = broken(), RecordingMeter()
    hub = MeterHub([bad, good], timeout=60)
    gateway = ModelGateway(registry(), {ProviderName.SCRIPTED: scripted()}, meters=hub)
    try:
        # Were the call waiting on the hanging meter it would never return: the guard turns
        # that into a failure instead of a stuck test.
        async with asyncio.timeout(30):
            response = await gateway.complete(request())
            await bad.called.wait()
            await good.called.wait()
    finally:
        await hub.aclose(timeout=0)

    assert response.text == REPLY
    assert [r.agent for r in good.records] == [WHO.agent]
    assert hub.stats()[bad.name]["delivered"] == 0


class RaisingSink(Deltas):
    async def __call__(self, piece: str) -> None:
        await super().__call__(piece)
        raise RuntimeError("the channel went away")


class HangingSink(Deltas):
    async def __call__(self, piece: str) -> None:
        await super().__call__(piece)
        await asyncio.Event().wait()


@pytest.mark.parametrize("sink", [RaisingSink, HangingSink])
async def test_a_broken_token_sink_does_not_break_generation(
    meter: tuple[MeterHub, RecordingMeter], bound: Attribution, sink: type[Deltas]
) -> None:
    hub, recording = meter
    gateway = ModelGateway(registry(), {ProviderName.SCRIPTED: scripted()}, meters=hub)
    deltas = sink()

    response = await gateway.complete(request(), on_delta=deltas)
    await hub.flush()

    assert response.text == REPLY
    assert deltas.pieces == ["one "]  # the sink is dropped after its first failure
    assert len(recording.records) == 1


async def test_a_healthy_sink_sees_every_piece(bound: Attribution) -> None:
    gateway = ModelGateway(registry(), {ProviderName.SCRIPTED: scripted()})
    deltas = Deltas()

    response = await gateway.complete(request(), on_delta=deltas)

    assert "".join(deltas.pieces) == response.text == REPLY


async def test_a_provider_slower_than_the_gateway_timeout_is_a_timeout(
    meter: tuple[MeterHub, RecordingMeter], bound: Attribution
) -> None:
    hub, recording = meter
    gateway = ModelGateway(
        registry(), {ProviderName.SCRIPTED: HangingProvider()}, meters=hub, timeout_seconds=0.2
    )

    with pytest.raises(ProviderTimeoutError) as raised:
        await gateway.complete(request())
    await hub.flush()

    assert raised.value.retryable
    assert recording.records == []


async def test_without_bound_attribution_records_are_still_emitted(
    meter: tuple[MeterHub, RecordingMeter],
) -> None:
    hub, recording = meter
    gateway = ModelGateway(registry(), {ProviderName.SCRIPTED: scripted()}, meters=hub)

    await gateway.complete(request())
    await hub.flush()

    [record] = recording.records
    assert record.agent is None and record.activation is None
