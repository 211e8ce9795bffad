"""The OpenAI adapter against a local server speaking the Chat Completions protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from pydantic import BaseModel

from activities.gateway.errors import retry_after_seconds
from activities.gateway.providers.openai import OpenAIProvider, _schema_name
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


class Rating(BaseModel):
    score: int
    reason: str


@pytest.fixture
async def provider(fake: FakeProviderServer) -> AsyncIterator[OpenAIProvider]:
    openai = OpenAIProvider("test-key", fake.openai_url, timeout_seconds=5.0)
    yield openai
    await openai.aclose()


async def test_plain_reply_maps_text_and_usage(
    provider: OpenAIProvider, fake: FakeProviderServer
) -> None:
    response = await provider.complete(request(), binding(ProviderName.OPENAI))

    assert response.text == fake.reply
    assert response.provider is ProviderName.OPENAI
    assert response.model == "fake-model"
    assert response.finish_reason == "stop"
    assert response.usage == EXPECTED_USAGE


async def test_system_prompt_messages_and_limits_are_sent(
    provider: OpenAIProvider, fake: FakeProviderServer
) -> None:
    await provider.complete(request(temperature=0.3), binding(ProviderName.OPENAI))

    [sent] = fake.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer test-key"
    assert sent.body["model"] == "fake-model"
    assert sent.body["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "And of Italy?"},
    ]
    assert sent.body["max_completion_tokens"] == 300  # the binding's limit
    assert sent.body["temperature"] == 0.3
    assert "response_format" not in sent.body


async def test_request_limit_overrides_the_binding(
    provider: OpenAIProvider, fake: FakeProviderServer
) -> None:
    await provider.complete(request(max_output_tokens=12), binding(ProviderName.OPENAI))

    assert fake.requests[0].body["max_completion_tokens"] == 12
    assert "temperature" not in fake.requests[0].body


async def test_compatible_endpoint_gets_max_tokens(fake: FakeProviderServer) -> None:
    compatible = OpenAIProvider(
        "not-needed", fake.openai_url, 5.0, provider=ProviderName.OPENAI_COMPATIBLE
    )
    try:
        response = await compatible.complete(
            request(), binding(ProviderName.OPENAI_COMPATIBLE, "default")
        )
    finally:
        await compatible.aclose()

    assert response.provider is ProviderName.OPENAI_COMPATIBLE
    assert fake.requests[0].body["max_tokens"] == 300
    assert "max_completion_tokens" not in fake.requests[0].body


async def test_streaming_delivers_deltas_in_order_and_usage_at_the_end(
    provider: OpenAIProvider, fake: FakeProviderServer
) -> None:
    deltas = Deltas()
    response = await provider.complete(request(), binding(ProviderName.OPENAI), on_delta=deltas)

    assert deltas.pieces == wire.pieces(fake.reply)
    assert len(deltas.pieces) > 1
    assert "".join(deltas.pieces) == response.text == fake.reply
    assert response.usage == EXPECTED_USAGE
    assert response.finish_reason == "stop"
    assert fake.requests[0].body["stream"] is True
    assert fake.requests[0].body["stream_options"] == {"include_usage": True}


async def test_schema_constrained_output_is_valid_json(
    provider: OpenAIProvider, fake: FakeProviderServer
) -> None:
    fake.structured = {"score": 4, "reason": "a lasting preference"}
    schema = Rating.model_json_schema()
    deltas = Deltas()

    response = await provider.complete(
        request(task="rate", response_schema=schema), binding(ProviderName.OPENAI), on_delta=deltas
    )

    assert Rating.model_validate_json(response.text) == Rating(
        score=4, reason="a lasting preference"
    )
    assert fake.requests[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Rating", "schema": schema, "strict": False},
    }
    assert deltas.pieces == []  # a JSON document is consumed whole, not streamed


@pytest.mark.parametrize(
    ("status", "error", "retryable"),
    [
        (400, ProviderInvalidRequestError, False),
        (401, ProviderAuthError, False),
        (403, ProviderAuthError, False),
        (404, ProviderInvalidRequestError, False),
        (422, ProviderInvalidRequestError, False),
        (429, ProviderRateLimitError, True),
        (500, ProviderServerError, True),
        (503, ProviderServerError, True),
    ],
)
async def test_http_failures_are_classified(
    provider: OpenAIProvider,
    fake: FakeProviderServer,
    status: int,
    error: type[ProviderError],
    retryable: bool,
) -> None:
    fake.fail(status)

    with pytest.raises(error) as raised:
        await provider.complete(request(), binding(ProviderName.OPENAI))

    assert raised.value.retryable is retryable
    assert len(fake.requests) == 1  # the SDK does not retry: Temporal does


async def test_rate_limit_carries_retry_after(
    provider: OpenAIProvider, fake: FakeProviderServer
) -> None:
    fake.fail(429, retry_after=7)

    with pytest.raises(ProviderRateLimitError) as raised:
        await provider.complete(request(), binding(ProviderName.OPENAI), on_delta=Deltas())

    assert raised.value.retry_after == 7.0


async def test_slow_response_is_a_timeout(fake: FakeProviderServer) -> None:
    impatient = OpenAIProvider("test-key", fake.openai_url, timeout_seconds=0.3)
    fake.delay(3)
    try:
        with pytest.raises(ProviderTimeoutError) as raised:
            await impatient.complete(request(), binding(ProviderName.OPENAI))
    finally:
        await impatient.aclose()

    assert raised.value.retryable


async def test_unreachable_endpoint_is_a_server_error() -> None:
    nowhere = OpenAIProvider("test-key", f"http://127.0.0.1:{free_port()}/v1", 5.0)
    try:
        with pytest.raises(ProviderServerError) as raised:
            await nowhere.complete(request(), binding(ProviderName.OPENAI))
    finally:
        await nowhere.aclose()

    assert raised.value.retryable


def test_schema_name_falls_back_when_the_title_is_not_a_name() -> None:
    assert _schema_name({"title": "Memory rating!"}) == "reply"
    assert _schema_name({"title": "Objections"}) == "Objections"


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date already past
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_every_form(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(headers) == seconds
