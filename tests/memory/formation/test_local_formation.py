"""A long range forms a memory on the real local model, under the local plan's budgets.

The llama.cpp server runs in its own process (the ``local_model_server`` fixture), as the stack
runs it. Summarize reads the latest turns within its budget; rate and classify read the summary;
every reply parses, the summary repeats no sentence and no tag copies the prompt's wording.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.gateway.gateway import ModelGateway
from activities.gateway.plans import local_plan
from activities.gateway.providers.local import LocalProvider
from activities.gateway.registry import ModelRegistry
from activities.gateway.repetition import repeated_sentence
from activities.memory.formation import calls, prompts
from schemas.memory_formation import ClassificationReply, RatingReply, SummaryReply
from schemas.models import ModelBinding, ProviderName, TaskType
from tests.memory.formation.test_local_budget import VOICE, turns


@pytest.fixture
async def gateway(local_model_server: str) -> AsyncIterator[ModelGateway]:
    binding = ModelBinding(
        provider=ProviderName.LOCAL, model="smollm2", context_window=8192, max_output_tokens=200
    )
    registry = ModelRegistry(
        bindings=dict.fromkeys(TaskType, binding), plans={ProviderName.LOCAL: local_plan()}
    )
    gw = ModelGateway(
        registry,
        {ProviderName.LOCAL: LocalProvider(base_url=local_model_server, timeout_seconds=120)},
    )
    yield gw
    await gw.aclose()


@pytest.mark.local_model
async def test_a_long_range_forms_a_clean_memory_on_the_local_model(
    gateway: ModelGateway,
) -> None:
    dialog = turns(60)

    def budget(task: TaskType) -> int | None:
        return calls.stage_plan(gateway, task).max_transcript_tokens

    summary = await calls.complete_json(
        gateway,
        prompts.summary_request(VOICE, dialog, [], transcript_tokens=budget(TaskType.SUMMARIZE)),
        SummaryReply,
    )
    text = summary.summary.strip()
    rating = await calls.complete_json(
        gateway,
        prompts.rating_request(VOICE, text, dialog, [], transcript_tokens=budget(TaskType.RATE)),
        RatingReply,
    )
    classification = await calls.complete_json(
        gateway,
        prompts.classification_request(
            VOICE, text, dialog, [], transcript_tokens=budget(TaskType.CLASSIFY)
        ),
        ClassificationReply,
    )

    assert text and repeated_sentence(text) is None
    assert 1 <= rating.importance <= 10
    assert not any(calls.echoes_prompt(tag) for tag in calls.clean_tags(classification.tags))
