"""An OpenAI-compatible server is asked for structured replies in the dialect it speaks.

Against local servers speaking each dialect (llama-cpp-python's, Ollama's, one with no
structured replies) and against llama-cpp-python's real server running the default model.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from activities.gateway.factory import build_provider
from activities.gateway.gateway import ModelGateway
from activities.gateway.lanes import ModelLanes
from activities.gateway.providers.compatible import CompatibleProvider, StructuredDialect
from activities.gateway.registry import ModelRegistry
from contract.provider_errors import ProviderServerError
from schemas.models import ChatMessage, ModelBinding, ProviderName, Sampling, TaskType
from schemas.settings import Settings
from tests.fakes.provider_server import (
    LLAMA_CPP_PYTHON,
    NO_RESPONSE_FORMAT,
    OLLAMA,
    FakeProviderServer,
)
from tests.gateway.conftest import binding, request


class Rating(BaseModel):
    score: int
    reason: str


SCHEMA = Rating.model_json_schema()
ANSWER = {"score": 7, "reason": "clear"}


@pytest.fixture
async def compatible(fake: FakeProviderServer) -> AsyncIterator[CompatibleProvider]:
    fake.structured = ANSWER
    provider = CompatibleProvider("not-needed", fake.openai_url, timeout_seconds=5.0)
    yield provider
    await provider.aclose()


async def rate(provider: CompatibleProvider) -> Rating:
    response = await provider.complete(
        request(task=TaskType.RATE, response_schema=SCHEMA),
        binding(ProviderName.OPENAI_COMPATIBLE),
    )
    return Rating.model_validate_json(response.text)


def formats(fake: FakeProviderServer) -> list[str | None]:
    return [(r.body.get("response_format") or {}).get("type") for r in fake.requests]


async def test_a_server_that_takes_json_schema_is_asked_once_in_it(
    compatible: CompatibleProvider, fake: FakeProviderServer
) -> None:
    fake.response_formats = OLLAMA

    assert await rate(compatible) == Rating(**ANSWER)
    assert formats(fake) == ["json_schema"]
    assert compatible.dialect is StructuredDialect.JSON_SCHEMA


async def test_llama_cpp_pythons_refusal_steps_down_to_json_object_and_is_remembered(
    compatible: CompatibleProvider, fake: FakeProviderServer
) -> None:
    fake.response_formats = LLAMA_CPP_PYTHON

    assert await rate(compatible) == Rating(**ANSWER)
    assert await rate(compatible) == Rating(**ANSWER)

    assert formats(fake) == ["json_schema", "json_object", "json_object"]
    assert fake.requests[1].body["response_format"]["schema"] == SCHEMA
    assert compatible.dialect is StructuredDialect.JSON_OBJECT


async def test_a_server_without_structured_replies_gets_the_schema_in_its_instructions(
    compatible: CompatibleProvider, fake: FakeProviderServer
) -> None:
    fake.response_formats = NO_RESPONSE_FORMAT

    assert await rate(compatible) == Rating(**ANSWER)

    assert formats(fake) == ["json_schema", "json_object", None]
    system = fake.requests[-1].body["messages"][0]
    assert system["role"] == "system"
    assert json.dumps(SCHEMA) in system["content"]
    assert compatible.dialect is StructuredDialect.PROMPT


async def test_plain_replies_are_never_sent_a_response_format(
    compatible: CompatibleProvider, fake: FakeProviderServer
) -> None:
    fake.response_formats = LLAMA_CPP_PYTHON

    response = await compatible.complete(request(), binding(ProviderName.OPENAI_COMPATIBLE))

    assert response.text == fake.reply
    assert formats(fake) == [None]
    assert compatible.dialect is StructuredDialect.JSON_SCHEMA  # nothing learned from it


async def test_a_failure_that_is_not_about_the_form_is_raised_without_stepping_down(
    compatible: CompatibleProvider, fake: FakeProviderServer
) -> None:
    fake.fail(503)

    with pytest.raises(ProviderServerError, match="fake failure 503"):
        await rate(compatible)

    assert formats(fake) == ["json_schema"]
    assert compatible.dialect is StructuredDialect.JSON_SCHEMA


async def test_a_configured_dialect_is_kept_even_when_refused(fake: FakeProviderServer) -> None:
    fake.response_formats = LLAMA_CPP_PYTHON
    provider = CompatibleProvider(
        "not-needed", fake.openai_url, timeout_seconds=5.0, dialect=StructuredDialect.JSON_SCHEMA
    )
    try:
        with pytest.raises(ProviderServerError, match="json_object"):
            await rate(provider)
    finally:
        await provider.aclose()

    assert formats(fake) == ["json_schema"]


@pytest.mark.local_model
async def test_llama_cpp_pythons_real_server_answers_structured_calls(
    local_model_server: str,
) -> None:
    # The server the stack runs, addressed as any OpenAI-compatible endpoint: before the
    # dialect was learned, every structured call failed here (500, json_schema refused).
    provider = CompatibleProvider("not-needed", local_model_server, timeout_seconds=60.0)
    small = ModelBinding(
        provider=ProviderName.OPENAI_COMPATIBLE,
        model="default",
        context_window=8192,
        max_output_tokens=80,
    )
    try:
        response = await provider.complete(
            request(
                task=TaskType.RATE,
                system="You rate replies.",
                messages=[ChatMessage(role="user", content="Rate 'Paris is in France' as JSON.")],
                response_schema=SCHEMA,
                temperature=0.0,
            ),
            small,
        )
    finally:
        await provider.aclose()

    Rating.model_validate_json(response.text)
    assert provider.dialect is StructuredDialect.JSON_OBJECT


def every_structured_schema() -> dict[str, dict[str, Any]]:
    """Each schema Persyn asks a model to fill, by what asks for it."""
    from activities.deliberation.judge import JUDGE_SCHEMA
    from activities.deliberation.objections import CRITIQUE_SCHEMA
    from activities.emotion.classifier import EMOTION_SCHEMA, OPTIONAL_SCHEMA
    from activities.guardrails.classify import hostility_request
    from activities.observations.prompts import ExtractionReply, VerdictReply
    from schemas.graph import GraphExtraction
    from schemas.memory_formation import ClassificationReply, RatingReply, SummaryReply

    hostility = hostility_request([]).response_schema
    assert hostility is not None
    return {
        "summarize": SummaryReply.model_json_schema(),
        "rate": RatingReply.model_json_schema(),
        "classify": ClassificationReply.model_json_schema(),
        "decide": JUDGE_SCHEMA,
        "critique": CRITIQUE_SCHEMA,
        "emotion": EMOTION_SCHEMA,
        "emotion, optional": OPTIONAL_SCHEMA,
        "observe": ExtractionReply.model_json_schema(),
        "observe, verdict": VerdictReply.model_json_schema(),
        "graph": GraphExtraction.model_json_schema(),
        "hostility": hostility,
    }


@pytest.mark.local_model
async def test_every_schema_on_the_compatible_plan_leaves_llama_cpp_pythons_server_alive(
    local_model_server: str,
) -> None:
    # A detected llama-cpp-python server died (SIGSEGV) on the memory summary's unclamped
    # schema: on its default plan every schema Persyn sends is clamped, and each compiles.
    bound = ModelBinding(
        provider=ProviderName.OPENAI_COMPATIBLE,
        model="default",
        context_window=8192,
        max_output_tokens=48,
    )
    registry = ModelRegistry(bindings=dict.fromkeys(TaskType, bound))
    provider = CompatibleProvider("not-needed", local_model_server, timeout_seconds=60.0)
    gateway = ModelGateway(registry, {ProviderName.OPENAI_COMPATIBLE: provider})
    answered: list[str] = []
    try:
        for name, schema in every_structured_schema().items():
            await gateway.complete(
                request(
                    task=TaskType.CLASSIFY,
                    system="You answer in JSON.",
                    messages=[ChatMessage(role="user", content=f"Fill in the {name} form.")],
                    response_schema=schema,
                    temperature=0.0,
                )
            )
            answered.append(name)  # capped at 48 tokens, the JSON may stop short
    finally:
        await gateway.aclose()

    assert answered == list(every_structured_schema())


async def test_a_reply_goes_before_background_work_on_a_server_of_this_machine(
    fake: FakeProviderServer,
) -> None:
    # Ollama and llama.cpp answer one call at a time: a memory-formation call holding the
    # server gives way to a reply and runs again after it.
    fake.structured = ANSWER
    lanes = ModelLanes(quiet_s=0.05)
    provider = CompatibleProvider("x", fake.openai_url, timeout_seconds=10.0, lanes=lanes)
    fake.delay(5)
    try:
        background = asyncio.create_task(rate(provider))
        assert await asyncio.to_thread(fake.received.wait, 5)
        reply = await provider.complete(request(), binding(ProviderName.OPENAI_COMPATIBLE))
        rated = await background
    finally:
        await provider.aclose()

    assert reply.text and rated == Rating.model_validate(ANSWER)
    assert lanes.preemptions == 1
    assert formats(fake) == ["json_schema", None, "json_schema"]


@pytest.mark.parametrize(
    "url,here",
    [
        ("http://127.0.0.1:11434/v1", True),
        ("http://localhost:1234/v1", True),
        ("http://[::1]:8080/v1", True),
        ("https://api.together.xyz/v1", False),
        ("http://10.0.0.7:8000/v1", False),
    ],
)
def test_only_a_server_on_this_machine_gets_lanes(url: str, here: bool) -> None:
    settings = Settings(provider="openai-compatible", openai_base_url=url)

    provider = build_provider(ProviderName.OPENAI_COMPATIBLE, settings)

    assert isinstance(provider, CompatibleProvider)
    assert (provider.lanes is not None) is here


async def test_the_small_model_plans_sampling_reaches_the_server_and_nothing_else_does(
    compatible: CompatibleProvider, fake: FakeProviderServer
) -> None:
    small = Sampling(temperature=0.7, top_k=40, repeat_penalty=1.3)
    bound = binding(ProviderName.OPENAI_COMPATIBLE)

    await compatible.complete(request(sampling=small), bound)
    await compatible.complete(request(), bound)

    planned, plain = (r.body for r in fake.requests)
    assert (planned["top_k"], planned["repeat_penalty"]) == (40, 1.3)
    assert "min_p" not in planned
    assert not {"top_k", "repeat_penalty", "min_p"} & set(plain)
