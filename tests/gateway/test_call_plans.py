"""Call plans: each provider's stages capped, sampled, clamped and cut as its plan says."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from activities.deliberation.judge import JUDGE_SCHEMA
from activities.gateway.gateway import ModelGateway
from activities.gateway.plans import default_plan, local_plan, shaped
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from activities.gateway.registry import ModelRegistry
from activities.gateway.tidy import REPETITION_CUT, WHOLE_SENTENCES_TOKENS
from schemas.memory_formation import SummaryReply
from schemas.models import (
    CallPlan,
    ChatMessage,
    ModelBinding,
    ModelRequest,
    ModelResponse,
    ProviderName,
    StagePlan,
    TaskType,
    ToolSpec,
)
from schemas.settings import Settings
from tests.gateway.conftest import Deltas, request

LOOP = "Hello Sam! I'm glad you came. I'm glad you came. I'm glad you came."
TOOL = ToolSpec(name="remember", description="Remember something.")


def local_registry(provider: ProviderName = ProviderName.SCRIPTED) -> ModelRegistry:
    binding = ModelBinding(provider=provider, model="small", context_window=8192)
    return ModelRegistry(bindings=dict.fromkeys(TaskType, binding), plans={provider: local_plan()})


def test_the_local_plan_sizes_replies_for_chat_and_verdicts_for_a_yes_or_no() -> None:
    reply = shaped(request(task=TaskType.RESPOND), local_plan())
    verdict = shaped(
        request(task=TaskType.DECIDE, response_schema=JUDGE_SCHEMA, max_output_tokens=300),
        local_plan(),
    )

    assert reply.max_output_tokens == 96
    assert reply.sampling is not None and reply.sampling.repeat_penalty == 1.3
    assert reply.sampling.temperature == 0.7 and reply.sampling.top_p == 0.9
    assert reply.sampling.stop
    assert verdict.max_output_tokens == 64
    assert verdict.response_schema is not None
    assert verdict.response_schema["properties"]["reason"]["maxLength"] == 100
    # Penalties would fight the braces and quotes of JSON.
    assert verdict.sampling is not None and verdict.sampling.repeat_penalty == 1.0


def test_a_request_asking_less_than_the_cap_keeps_its_own_limit() -> None:
    assert shaped(request(max_output_tokens=40), local_plan()).max_output_tokens == 40


def test_schemas_are_clamped_only_for_grammar_constrained_providers() -> None:
    schema = SummaryReply.model_json_schema()
    local = shaped(request(task=TaskType.SUMMARIZE, response_schema=schema), local_plan())
    hosted = shaped(
        request(task=TaskType.SUMMARIZE, response_schema=schema),
        default_plan(ProviderName.ANTHROPIC),
    )
    own_server = shaped(
        request(task=TaskType.SUMMARIZE, response_schema=schema),
        default_plan(ProviderName.OPENAI_COMPATIBLE),
    )

    assert local.response_schema is not None
    assert local.response_schema["properties"]["summary"]["maxLength"] == 500
    assert hosted.response_schema == schema
    # Ollama, LM Studio and llama.cpp compile a schema into a grammar too, with room to write.
    assert own_server.response_schema is not None
    assert own_server.response_schema["properties"]["summary"]["maxLength"] == 1000


def test_the_local_model_is_offered_no_tools() -> None:
    assert shaped(request(tools=[TOOL]), local_plan()).tools == []
    assert shaped(request(tools=[TOOL]), CallPlan()).tools == [TOOL]


def test_the_plan_says_which_stages_run() -> None:
    registry = ModelRegistry.from_settings(Settings(provider="local"))

    assert registry.runs(TaskType.RESPOND) and registry.runs(TaskType.CLASSIFY)
    assert not registry.runs(TaskType.SUMMARIZE) and not registry.runs(TaskType.RATE)
    assert not registry.runs(TaskType.CRITIQUE) and not registry.runs(TaskType.REFINE)
    assert not registry.runs(TaskType.DECIDE)
    hosted = ModelRegistry.from_settings(Settings(provider="scripted"))
    assert hosted.runs(TaskType.CRITIQUE)


def test_settings_replace_a_providers_plan_whole() -> None:
    plan = CallPlan(stages={TaskType.CRITIQUE: StagePlan(run=True, max_output_tokens=99)})
    registry = ModelRegistry.from_settings(
        Settings(provider="local", call_plans={ProviderName.LOCAL: plan})
    )

    assert registry.runs(TaskType.CRITIQUE)
    assert registry.plan(ProviderName.LOCAL) == plan


async def test_the_gateway_cuts_a_loop_from_the_reply_and_the_stream() -> None:
    provider = ScriptedProvider(Script(rules=[ScriptRule(reply=LOOP)]))
    gateway = ModelGateway(local_registry(), {ProviderName.SCRIPTED: provider})
    deltas = Deltas()

    response = await gateway.complete(request(), on_delta=deltas)

    assert response.text == "Hello Sam! I'm glad you came."
    assert response.finish_reason == REPETITION_CUT
    assert "".join(deltas.pieces).strip() == response.text
    sent = provider.requests[0]
    assert sent.max_output_tokens == 96 and sent.sampling is not None


async def test_structured_replies_are_never_cut() -> None:
    reply = '{"speak": true, "reason": "I was asked directly. I was asked directly."}'
    provider = ScriptedProvider(Script(rules=[ScriptRule(reply=reply)]))
    gateway = ModelGateway(local_registry(), {ProviderName.SCRIPTED: provider})

    response = await gateway.complete(request(task=TaskType.DECIDE, response_schema=JUDGE_SCHEMA))

    assert response.text == reply


def test_the_reply_prompt_is_assembled_to_the_plans_input_cap() -> None:
    registry = ModelRegistry.from_settings(Settings(provider="local"))
    respond = registry.binding(TaskType.RESPOND)

    assert respond.context_window == 1536 + 96
    assert respond.max_output_tokens == 96
    # Memory formation reads whole chunks of dialog: its window stays the model's.
    assert registry.binding(TaskType.SUMMARIZE).context_window == 8192


async def test_a_reply_stopped_by_its_cap_ends_on_its_last_full_sentence() -> None:
    class Capped(ScriptedProvider):
        async def complete(self, *args: Any, **kwargs: Any) -> ModelResponse:
            response = await super().complete(*args, **kwargs)
            return response.model_copy(update={"finish_reason": "length"})

    provider = Capped(Script(rules=[ScriptRule(reply="Tide pools are small worlds. Crabs hide")]))
    gateway = ModelGateway(local_registry(), {ProviderName.SCRIPTED: provider})

    response = await gateway.complete(request())
    # Near the cap only finished sentences stream: "Crabs hide" was shown, then not kept.
    streamed = Deltas()
    near_cap = await gateway.complete(request(max_output_tokens=36), on_delta=streamed)

    assert response.text == near_cap.text == "Tide pools are small worlds."
    assert "".join(streamed.pieces).strip() == near_cap.text
    assert streamed.pieces[:3] == ["Tide ", "pools ", "are "]  # far from the cap: word by word


ECHO = "Ava, I'm so glad you're enjoying your adventure! But what is the difference?"


def with_earlier_reply(text: str) -> ModelRequest:
    return request(
        messages=[
            ChatMessage(role="user", content="Is it safe to touch anemones?"),
            ChatMessage(role="assistant", content=ECHO),
            ChatMessage(role="user", content="Why is the sea salty?"),
        ]
    )


async def test_a_reply_never_echoes_an_earlier_one_and_an_echo_is_asked_again() -> None:
    provider = ScriptedProvider(
        Script(
            rules=[
                ScriptRule(reply=ECHO, times=1),
                ScriptRule(reply="Salt washes in from rocks on land. Rivers carry it."),
            ]
        )
    )
    gateway = ModelGateway(local_registry(), {ProviderName.SCRIPTED: provider})
    deltas = Deltas()

    response = await gateway.complete(with_earlier_reply(ECHO), on_delta=deltas)

    assert response.text == "Salt washes in from rocks on land. Rivers carry it."
    assert "".join(deltas.pieces) == response.text  # the echo was never shown
    hotter = provider.requests[1].sampling
    assert hotter is not None and hotter.presence_penalty == 1.0
    assert len(provider.requests) == 2


async def test_a_reply_that_echoes_twice_is_kept_rather_than_dropped() -> None:
    provider = ScriptedProvider(Script(rules=[ScriptRule(reply=ECHO)]))
    gateway = ModelGateway(local_registry(), {ProviderName.SCRIPTED: provider})
    deltas = Deltas()

    response = await gateway.complete(with_earlier_reply(ECHO), on_delta=deltas)

    assert response.text == ECHO
    assert "".join(deltas.pieces) == ECHO


async def test_an_empty_reply_is_asked_for_once_more() -> None:
    provider = ScriptedProvider(
        Script(rules=[ScriptRule(reply="", times=1), ScriptRule(reply="Yes, gladly.")])
    )
    gateway = ModelGateway(local_registry(), {ProviderName.SCRIPTED: provider})

    response = await gateway.complete(request())

    assert response.text == "Yes, gladly."
    assert len(provider.requests) == 2


class WordPerToken(ScriptedProvider):
    """Streams ``text`` a word a token and stops at the request's cap, as a capped model does."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    async def complete(
        self, request: ModelRequest, binding: ModelBinding, **kwargs: Any
    ) -> ModelResponse:
        words = re.findall(r"\S+\s*", self.text)
        cap = request.max_output_tokens or len(words)
        on_delta = kwargs.get("on_delta")
        for word in words[:cap]:
            if on_delta is not None:
                await on_delta(word)
        return ModelResponse(
            text="".join(words[:cap]),
            model="small",
            provider=ProviderName.SCRIPTED,
            finish_reason="length" if len(words) > cap else "stop",
        )


def sentence(index: int, length: int) -> str:
    return " ".join(f"w{index}x{word}" for word in range(length)) + "."


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(1, WHOLE_SENTENCES_TOKENS), min_size=1, max_size=12),
    cap=st.integers(WHOLE_SENTENCES_TOKENS + 1, 160),
)
def test_what_streams_is_what_is_kept_whatever_sentence_the_cap_stops(
    lengths: list[int], cap: int
) -> None:
    # Any reply whose sentences fit the hold-back window: the cap may fall anywhere.
    text = " ".join(sentence(i, n) for i, n in enumerate(lengths))
    gateway = ModelGateway(local_registry(), {ProviderName.SCRIPTED: WordPerToken(text)})
    streamed = Deltas()

    response = asyncio.run(gateway.complete(request(max_output_tokens=cap), on_delta=streamed))

    assert "".join(streamed.pieces).strip() == response.text.strip()
