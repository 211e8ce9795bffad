"""The Anthropic adapter against a local server speaking the Messages protocol."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from pydantic import BaseModel, TypeAdapter

from activities.gateway.providers.anthropic import AnthropicProvider
from contract.provider_errors import (
    ProviderAuthError,
    ProviderError,
    ProviderInvalidRequestError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderTimeoutError,
)
from schemas.models import ProviderName, TokenUsage
from temporal.devserver import free_port
from tests.fakes import wire
from tests.fakes.provider_server import FakeProviderServer
from tests.gateway.conftest import SYSTEM, Deltas, binding, request

EXPECTED_USAGE = TokenUsage(
    input_tokens=wire.PROMPT_TOKENS,
    output_tokens=wire.COMPLETION_TOKENS,
    cached_read_tokens=wire.CACHED_READ,
    cached_write_tokens=wire.CACHED_WRITE,
)
ANTHROPIC = binding(ProviderName.ANTHROPIC)


class Objection(BaseModel):
    claim: str
    severity: int


@pytest.fixture
async def provider(fake: FakeProviderServer) -> AsyncIterator[AnthropicProvider]:
    anthropic = AnthropicProvider("test-key", fake.url, timeout_seconds=5.0)
    yield anthropic
    await anthropic.aclose()


async def test_plain_reply_maps_text_and_usage(
    provider: AnthropicProvider, fake: FakeProviderServer
) -> None:
    response = await provider.complete(request(), ANTHROPIC)

    assert response.text == fake.reply
    assert response.provider is ProviderName.ANTHROPIC
    assert response.model == "fake-model"
    assert response.finish_reason == "end_turn"
    # Anthropic reports cached tokens beside the uncached rest; the prompt total is their sum.
    assert response.usage == EXPECTED_USAGE


async def test_system_block_is_cacheable_and_messages_are_sent(
    provider: AnthropicProvider, fake: FakeProviderServer
) -> None:
    await provider.complete(request(), ANTHROPIC)

    [sent] = fake.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["authorization"] == "Bearer test-key"
    assert sent.body["model"] == "fake-model"
    assert sent.body["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    assert sent.body["messages"] == [
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "And of Italy?"},
    ]
    assert sent.body["max_tokens"] == 300  # the binding's limit
    assert "tools" not in sent.body


async def test_request_limit_overrides_and_sampling_parameters_are_not_sent(
    provider: AnthropicProvider, fake: FakeProviderServer
) -> None:
    # The current API version answers 400 to any temperature, so asking for one must not fail.
    await provider.complete(request(max_output_tokens=20, temperature=0.4), ANTHROPIC)

    assert fake.requests[0].body["max_tokens"] == 20
    assert "temperature" not in fake.requests[0].body


async def test_empty_system_is_left_out(
    provider: AnthropicProvider, fake: FakeProviderServer
) -> None:
    await provider.complete(request(system=""), ANTHROPIC)

    assert "system" not in fake.requests[0].body


async def test_streaming_delivers_deltas_in_order_and_usage_at_the_end(
    provider: AnthropicProvider, fake: FakeProviderServer
) -> None:
    deltas = Deltas()
    response = await provider.complete(request(), ANTHROPIC, on_delta=deltas)

    assert deltas.pieces == wire.pieces(fake.reply)
    assert len(deltas.pieces) > 1
    assert "".join(deltas.pieces) == response.text == fake.reply
    assert response.usage == EXPECTED_USAGE
    assert response.finish_reason == "end_turn"
    assert fake.requests[0].body["stream"] is True


async def test_schema_constrained_output_is_a_forced_tool_call(
    provider: AnthropicProvider, fake: FakeProviderServer
) -> None:
    fake.structured = {"claim": "the date is wrong", "severity": 2}
    schema = Objection.model_json_schema()
    deltas = Deltas()

    response = await provider.complete(
        request(task="critique", response_schema=schema), ANTHROPIC, on_delta=deltas
    )

    assert Objection.model_validate_json(response.text) == Objection(
        claim="the date is wrong", severity=2
    )
    sent = fake.requests[0].body
    assert sent["tools"] == [
        {
            "name": "respond",
            "description": "Give the reply in exactly this structure.",
            "input_schema": schema,
        }
    ]
    assert sent["tool_choice"] == {"type": "tool", "name": "respond"}
    assert deltas.pieces == []  # a JSON document is consumed whole, not streamed


async def test_a_schema_that_is_not_an_object_is_wrapped_and_unwrapped(
    provider: AnthropicProvider, fake: FakeProviderServer
) -> None:
    schema = TypeAdapter(list[Objection]).json_schema()
    fake.structured = {"result": [{"claim": "too long", "severity": 1}]}

    response = await provider.complete(request(response_schema=schema), ANTHROPIC)

    assert TypeAdapter(list[Objection]).validate_json(response.text) == [
        Objection(claim="too long", severity=1)
    ]
    tool_schema = fake.requests[0].body["tools"][0]["input_schema"]
    assert tool_schema["type"] == "object"
    assert tool_schema["properties"]["result"]["type"] == "array"
    assert "$defs" in tool_schema  # references still resolve from the new root
    json.loads(response.text)


@pytest.mark.parametrize(
    ("status", "error", "retryable"),
    [
        (400, ProviderInvalidRequestError, False),
        (401, ProviderAuthError, False),
        (403, ProviderAuthError, False),
        (404, ProviderInvalidRequestError, False),
        (429, ProviderRateLimitError, True),
        (500, ProviderServerError, True),
        (529, ProviderServerError, True),  # overloaded
    ],
)
@pytest.mark.parametrize("streamed", [False, True])
async def test_http_failures_are_classified(
    provider: AnthropicProvider,
    fake: FakeProviderServer,
    status: int,
    error: type[ProviderError],
    retryable: bool,
    streamed: bool,
) -> None:
    fake.fail(status)

    with pytest.raises(error) as raised:
        await provider.complete(request(), ANTHROPIC, on_delta=Deltas() if streamed else None)

    assert raised.value.retryable is retryable
    assert len(fake.requests) == 1  # the SDK does not retry: Temporal does


@pytest.mark.parametrize(
    ("status", "error"), [(529, ProviderServerError), (429, ProviderRateLimitError)]
)
async def test_an_error_event_inside_the_stream_is_classified_by_its_type(
    provider: AnthropicProvider, fake: FakeProviderServer, status: int, error: type[ProviderError]
) -> None:
    fake.fail(status, in_stream=True)

    with pytest.raises(error) as raised:
        await provider.complete(request(), ANTHROPIC, on_delta=Deltas())

    assert raised.value.retryable


async def test_rate_limit_carries_retry_after(
    provider: AnthropicProvider, fake: FakeProviderServer
) -> None:
    fake.fail(429, retry_after=2.5)

    with pytest.raises(ProviderRateLimitError) as raised:
        await provider.complete(request(), ANTHROPIC)

    assert raised.value.retry_after == 2.5


async def test_slow_response_is_a_timeout(fake: FakeProviderServer) -> None:
    impatient = AnthropicProvider("test-key", fake.url, timeout_seconds=0.3)
    fake.delay(3)
    try:
        with pytest.raises(ProviderTimeoutError) as raised:
            await impatient.complete(request(), ANTHROPIC)
    finally:
        await impatient.aclose()

    assert raised.value.retryable


async def test_unreachable_endpoint_is_a_server_error() -> None:
    nowhere = AnthropicProvider("test-key", f"http://127.0.0.1:{free_port()}", 5.0)
    try:
        with pytest.raises(ProviderServerError) as raised:
            await nowhere.complete(request(), ANTHROPIC)
    finally:
        await nowhere.aclose()

    assert raised.value.retryable
