"""The emotion classifier on the default local model (llama.cpp serving SmolLM2, in its own
process): the request the activity builds, shaped by the local call plan, compiles as a grammar
and comes back as a distribution the strict reader accepts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from activities.emotion.classifier import classifier_request, parse_distribution
from activities.emotion.state import decayed
from activities.gateway.gateway import ModelGateway
from activities.gateway.plans import local_plan
from activities.gateway.providers.local import LocalProvider
from activities.gateway.registry import ModelRegistry
from schemas.dialog import DialogTurn, Role
from schemas.emotion import EmotionSettings
from schemas.ids import new_ulid
from schemas.memory import Emotion
from schemas.models import ModelBinding, ProviderName, TaskType

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
async def gateway(local_model_server: str) -> AsyncIterator[ModelGateway]:
    binding = ModelBinding(
        provider=ProviderName.LOCAL, model="smollm2", context_window=8192, max_output_tokens=160
    )
    registry = ModelRegistry(
        bindings=dict.fromkeys(TaskType, binding), plans={ProviderName.LOCAL: local_plan()}
    )
    provider = LocalProvider(base_url=local_model_server, timeout_seconds=60)
    gw = ModelGateway(registry, {ProviderName.LOCAL: provider})
    yield gw
    await gw.aclose()


def turn(role: Role, text: str) -> DialogTurn:
    return DialogTurn(
        turn_id=new_ulid(),
        conversation_id=new_ulid(),
        role=role,
        speaker_id="sam" if role is Role.PERSON else "ava",
        speaker_name="Sam" if role is Role.PERSON else "Ava",
        text=text,
        at=NOW,
    )


@pytest.mark.local_model
async def test_the_local_model_answers_with_a_readable_distribution(
    gateway: ModelGateway,
) -> None:
    turns = [
        turn(Role.PERSON, "You got it wrong AGAIN. This is the third time I ask."),
        turn(Role.AGENT, "I'm sorry, let me try once more."),
        turn(Role.PERSON, "Forget it. You are useless."),
    ]
    request = classifier_request(
        name="Ava", turns=turns, before=decayed(None, NOW, EmotionSettings())
    )
    response = await gateway.complete(request)

    distribution = parse_distribution(response.text)
    assert set(distribution) == set(Emotion)
    assert abs(sum(distribution.values()) - 1) < 0.01
    assert response.usage.output_tokens <= 120
