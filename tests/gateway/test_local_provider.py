"""The in-process llama.cpp provider, generating for real on the shipped SmolLM2 model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from activities.gateway.errors import ProviderUnavailableError
from activities.gateway.providers.local import LocalProvider, default_model_path
from schemas.models import ChatMessage, ModelBinding, ModelRequest, ProviderName, TaskType
from tests.gateway.conftest import Deltas

LOCAL = ModelBinding(
    provider=ProviderName.LOCAL,
    model="smollm2-135m-instruct",
    context_window=8192,
    max_output_tokens=24,
)


def ask(text: str, **overrides: object) -> ModelRequest:
    return ModelRequest(
        task=TaskType.RESPOND,
        system="You are a helpful assistant. Answer in one short sentence.",
        messages=[ChatMessage(role="user", content=text)],
        **overrides,
    )


class Verdict(BaseModel):
    ok: bool


@pytest.fixture(scope="module")
async def local() -> AsyncIterator[LocalProvider]:
    provider = LocalProvider()
    yield provider
    await provider.aclose()


def test_the_default_model_ships_with_the_local_extra() -> None:
    assert default_model_path().is_file()


@pytest.mark.local_model
async def test_generates_a_short_reply_and_counts_usage(local: LocalProvider) -> None:
    response = await local.complete(ask("Say hello."), LOCAL)

    assert response.text.strip()
    assert response.provider is ProviderName.LOCAL
    assert response.model == "smollm2-135m-instruct"
    assert response.usage.input_tokens > 0
    assert 0 < response.usage.output_tokens <= LOCAL.max_output_tokens + 1


@pytest.mark.local_model
async def test_streamed_pieces_make_up_the_reply(local: LocalProvider) -> None:
    deltas = Deltas()
    response = await local.complete(ask("Name a colour."), LOCAL, on_delta=deltas)

    assert deltas.pieces
    assert "".join(deltas.pieces) == response.text


@pytest.mark.local_model
async def test_schema_constrained_output_is_valid_json(local: LocalProvider) -> None:
    deltas = Deltas()
    response = await local.complete(
        ask("Is the sky blue? Answer in JSON.", response_schema=Verdict.model_json_schema()),
        LOCAL.model_copy(update={"max_output_tokens": 48}),
        on_delta=deltas,
    )

    Verdict.model_validate_json(response.text)
    assert deltas.pieces == []  # a JSON document is consumed whole, not streamed


@pytest.mark.local_model
async def test_concurrent_calls_take_turns_on_the_model(local: LocalProvider) -> None:
    replies = await asyncio.gather(
        local.complete(ask("Say yes."), LOCAL), local.complete(ask("Say no."), LOCAL)
    )

    assert all(reply.text.strip() for reply in replies)


@pytest.mark.local_model
async def test_a_cancelled_call_frees_the_model_for_the_next(local: LocalProvider) -> None:
    started = asyncio.Event()

    async def first_piece(_: str) -> None:
        started.set()

    call = asyncio.ensure_future(
        local.complete(
            ask("Count from one to one hundred."),
            LOCAL.model_copy(update={"max_output_tokens": 400}),
            on_delta=first_piece,
        )
    )
    await started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call

    response = await local.complete(ask("Say hello."), LOCAL)
    assert response.text.strip()


async def test_a_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    provider = LocalProvider(model_path=tmp_path / "missing.gguf")
    try:
        with pytest.raises(ProviderUnavailableError) as raised:
            await provider.complete(ask("Hello?"), LOCAL)
    finally:
        await provider.aclose()

    assert not raised.value.retryable
