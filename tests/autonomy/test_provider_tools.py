"""Tool use in each provider's native format, against the fake server over real sockets."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from anthropic.types import Message

from activities.gateway.providers import anthropic_tools
from activities.gateway.providers.anthropic import AnthropicProvider
from activities.gateway.providers.openai import OpenAIProvider
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from schemas.models import (
    ChatMessage,
    ProviderName,
    ToolCall,
    ToolExecutor,
    ToolSpec,
)
from tests.fakes.provider_server import FakeProviderServer
from tests.gateway.conftest import Deltas, binding, fake, request

__all__ = ["fake"]  # the fake provider server fixture, shared with the adapter tests

CALC = ToolSpec(
    name="calculate",
    description="Evaluate arithmetic exactly.",
    input_schema={
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
)
SEARCH = ToolSpec(
    name="web_search",
    description="Search the web (run by the provider).",
    executor=ToolExecutor.PROVIDER,
    provider=ProviderName.ANTHROPIC,
    provider_type="web_search_20250305",
    provider_config={"max_uses": 2},
)
OTHER = ToolSpec(
    name="elsewhere",
    description="Another provider's server tool.",
    executor=ToolExecutor.PROVIDER,
    provider=ProviderName.OPENAI,
    provider_type="web_search_preview",
)
EXCHANGE = [
    ChatMessage(role="user", content="What is 6 times 7?"),
    ChatMessage(
        role="assistant",
        content="Let me work it out.",
        tool_calls=[ToolCall(id="call_1", name="calculate", arguments={"expression": "6*7"})],
    ),
    ChatMessage(role="tool", tool_call_id="call_1", content='{"value": "42"}'),
]


@pytest.fixture
async def anthropic(fake: FakeProviderServer) -> AsyncIterator[AnthropicProvider]:
    provider = AnthropicProvider("test-key", fake.url, timeout_seconds=5.0)
    yield provider
    await provider.aclose()


@pytest.fixture
async def openai(fake: FakeProviderServer) -> AsyncIterator[OpenAIProvider]:
    provider = OpenAIProvider("test-key", fake.openai_url, timeout_seconds=5.0)
    yield provider
    await provider.aclose()


async def test_anthropic_advertises_tools_natively_with_a_cache_breakpoint(
    anthropic: AnthropicProvider, fake: FakeProviderServer
) -> None:
    await anthropic.complete(request(tools=[CALC, SEARCH, OTHER]), binding(ProviderName.ANTHROPIC))

    tools = fake.requests[0].body["tools"]
    assert tools[0] == {
        "name": "calculate",
        "description": CALC.description,
        "input_schema": CALC.input_schema,
    }
    # The provider's own tool goes by its type; another provider's is not offered at all.
    assert tools[1]["type"] == "web_search_20250305" and tools[1]["max_uses"] == 2
    assert [t["name"] for t in tools] == ["calculate", "web_search"]
    assert tools[-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in tools[0]


@pytest.mark.parametrize("stream", [False, True])
async def test_anthropic_tool_use_becomes_tool_calls(
    anthropic: AnthropicProvider, fake: FakeProviderServer, stream: bool
) -> None:
    fake.call_tools([("calculate", {"expression": "6*7"}), ("calculate", {"expression": "1/3"})])
    deltas = Deltas() if stream else None
    response = await anthropic.complete(
        request(tools=[CALC]), binding(ProviderName.ANTHROPIC), on_delta=deltas
    )

    assert response.finish_reason == "tool_use"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("toolu_fake_0", "calculate", {"expression": "6*7"}),
        ("toolu_fake_1", "calculate", {"expression": "1/3"}),
    ]
    assert response.provider_content is None


async def test_anthropic_sends_tool_use_and_results_as_blocks(
    anthropic: AnthropicProvider, fake: FakeProviderServer
) -> None:
    await anthropic.complete(
        request(messages=EXCHANGE, tools=[CALC]), binding(ProviderName.ANTHROPIC)
    )

    messages = fake.requests[0].body["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me work it out."},
            {
                "type": "tool_use",
                "id": "call_1",
                "name": "calculate",
                "input": {"expression": "6*7"},
            },
        ],
    }
    assert messages[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "content": '{"value": "42"}',
                "is_error": False,
            }
        ],
    }


def test_anthropic_server_tool_replies_are_kept_verbatim_for_resuming() -> None:
    paused = Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [
                {"type": "text", "text": "Searching."},
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "tides Brest"},
                },
            ],
            "stop_reason": "pause_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )

    blocks = anthropic_tools.provider_content(paused)
    assert blocks is not None and [b["type"] for b in blocks] == ["text", "server_tool_use"]
    assert anthropic_tools.tool_calls(paused) == []  # nothing for the platform to run
    # Resuming re-sends the turn: the blocks go back as the assistant's content, unchanged.
    again = anthropic_tools.messages_param(
        [
            ChatMessage(role="user", content="tides?"),
            ChatMessage(role="assistant", content="Searching.", provider_content=blocks),
        ]
    )
    assert again[1] == {"role": "assistant", "content": blocks}


async def test_openai_advertises_functions_and_parses_calls(
    openai: OpenAIProvider, fake: FakeProviderServer
) -> None:
    fake.call_tools([("calculate", {"expression": "2**10"})])
    response = await openai.complete(request(tools=[CALC, SEARCH]), binding(ProviderName.OPENAI))

    assert fake.requests[0].body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "calculate",
                "description": CALC.description,
                "parameters": CALC.input_schema,
            },
        }
    ]
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls == [
        ToolCall(id="call_fake_0", name="calculate", arguments={"expression": "2**10"})
    ]


@pytest.mark.parametrize("stream", [False, True])
async def test_openai_malformed_arguments_are_kept_raw(
    openai: OpenAIProvider, fake: FakeProviderServer, stream: bool
) -> None:
    fake.call_tools([("calculate", '{"expression": "1+'), ("calculate", '["not", "an object"]')])
    response = await openai.complete(
        request(tools=[CALC]), binding(ProviderName.OPENAI), on_delta=Deltas() if stream else None
    )

    assert [(c.arguments, c.raw_arguments) for c in response.tool_calls] == [
        ({}, '{"expression": "1+'),
        ({}, '["not", "an object"]'),
    ]


async def test_openai_streams_assemble_fragmented_arguments(
    openai: OpenAIProvider, fake: FakeProviderServer
) -> None:
    fake.call_tools([("calculate", {"expression": "(1+2)*3 - 4/5"})])
    response = await openai.complete(
        request(tools=[CALC]), binding(ProviderName.OPENAI), on_delta=Deltas()
    )
    assert response.tool_calls[0].arguments == {"expression": "(1+2)*3 - 4/5"}


async def test_openai_sends_tool_calls_and_tool_messages(
    openai: OpenAIProvider, fake: FakeProviderServer
) -> None:
    await openai.complete(request(messages=EXCHANGE, tools=[CALC]), binding(ProviderName.OPENAI))

    messages = fake.requests[0].body["messages"]
    assert messages[2]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "calculate", "arguments": '{"expression": "6*7"}'},
        }
    ]
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": '{"value": "42"}'}


async def test_a_schema_reply_offers_no_other_tools(
    anthropic: AnthropicProvider, openai: OpenAIProvider, fake: FakeProviderServer
) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    await anthropic.complete(
        request(tools=[CALC], response_schema=schema), binding(ProviderName.ANTHROPIC)
    )
    await openai.complete(
        request(tools=[CALC], response_schema=schema), binding(ProviderName.OPENAI)
    )
    assert [t["name"] for t in fake.requests[0].body["tools"]] == ["respond"]
    assert "tools" not in fake.requests[1].body


async def test_scripted_rules_call_tools_then_answer_from_the_result() -> None:
    provider = ScriptedProvider(
        Script(
            rules=[
                ScriptRule(after_tool=True, reply="It is {tool}."),
                ScriptRule(
                    match="times",
                    tool_calls=[{"name": "calculate", "arguments": {"expression": "6*7"}}],
                ),
            ]
        )
    )
    first = await provider.complete(
        request(messages=EXCHANGE[:1], tools=[CALC]), binding(ProviderName.SCRIPTED)
    )
    assert first.tool_calls[0].arguments == {"expression": "6*7"} and first.text == ""
    second = await provider.complete(
        request(messages=EXCHANGE, tools=[CALC]), binding(ProviderName.SCRIPTED)
    )
    assert second.tool_calls == [] and second.text == 'It is {"value": "42"}.'


async def test_tool_choice_none_keeps_tools_but_asks_for_words(
    anthropic: AnthropicProvider, openai: OpenAIProvider, fake: FakeProviderServer
) -> None:
    await anthropic.complete(
        request(messages=EXCHANGE, tools=[CALC], tool_choice="none"),
        binding(ProviderName.ANTHROPIC),
    )
    await openai.complete(
        request(messages=EXCHANGE, tools=[CALC], tool_choice="none"), binding(ProviderName.OPENAI)
    )
    anthropic_body, openai_body = fake.requests[0].body, fake.requests[1].body
    assert anthropic_body["tool_choice"] == {"type": "none"} and anthropic_body["tools"]
    assert openai_body["tool_choice"] == "none" and openai_body["tools"]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("adapter", ["openai", "anthropic"])
async def test_unstorable_text_from_the_model_is_kept_not_fatal(
    anthropic: AnthropicProvider,
    openai: OpenAIProvider,
    fake: FakeProviderServer,
    adapter: str,
    stream: bool,
) -> None:
    provider = openai if adapter == "openai" else anthropic
    name = ProviderName.OPENAI if adapter == "openai" else ProviderName.ANTHROPIC
    fake.call_tools([("calculate", {"expression": "6\u0000*7"})])
    called = await provider.complete(
        request(tools=[CALC]), binding(name), on_delta=Deltas() if stream else None
    )
    [call] = called.tool_calls
    # Kept for the platform to tell the model what to fix; nothing the store cannot hold.
    raw = call.raw_arguments or ""
    assert call.arguments == {} and json.loads(raw) == {"expression": "6\u0000*7"}
    assert "\u0000" not in raw

    fake.reply = "Tea\u0000 is ready."
    replied = await provider.complete(
        request(), binding(name), on_delta=Deltas() if stream else None
    )
    assert replied.text == "Tea\ufffd is ready."
