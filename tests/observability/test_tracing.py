"""Tracing: one trace per activation, rooted at its turn, with model calls and background
work inside it, and conversation text only under the ``full`` content policy."""

from __future__ import annotations

import json
from pathlib import Path

from observability import tracing
from observability.span_file import SpanView, load_trace, span_files, trace_tree
from observability.tracing import root_span_id, trace_hex
from schemas.models import Attribution
from tests.harness import Harness, Stack
from tests.observability.background import run_background
from tests.observability.helpers import finished, traced_worker

PERSONA = "A lighthouse keeper who speaks of tides and weather."


def trace_ids_in(path: Path) -> set[str]:
    found = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                found |= {span["traceId"] for span in scope["spans"]}
    return found


def ancestors(span: SpanView, spans: list[SpanView]) -> list[str]:
    by_id = {s.span_id: s for s in spans}
    names, current = [], by_id.get(span.parent_id or "")
    while current is not None:
        names.append(current.name)
        current = by_id.get(current.parent_id or "")
    return names


async def one_turn(harness: Harness, text: str) -> tuple[str, str]:
    agent = await harness.create_agent(persona=PERSONA)
    receipt = await harness.say(agent.handle, text)
    marker = receipt.marker
    assert marker is not None and marker.activation_id and marker.conversation_id
    await finished(harness.client, marker.activation_id)
    return agent.handle, marker.activation_id


async def test_a_turn_is_one_trace_rooted_at_its_activation(stack: Stack, tmp_path: Path) -> None:
    span_file = tmp_path / "spans.jsonl"
    async with traced_worker(stack, span_file) as (harness, traced):
        handle, activation = await one_turn(harness, "tell me about the tides")
        traced.flush()

    # Nothing else opened a trace: not the inbox, not the conversation, not the client.
    assert trace_ids_in(span_file) == {trace_hex(activation)}
    spans = load_trace(span_files(span_file), trace_hex(activation))
    [root] = [span for span in spans if span.parent_id is None]
    assert root.name == "turn:message"
    assert root.span_id == f"{root_span_id(activation):016x}"
    assert root.attributes["persyn.agent"] == handle
    assert root.attributes["persyn.outcome"] == "spoke"
    assert root.attributes["persyn.trigger"] == "message"
    assert root.attributes["persyn.channel"] == "terminal:tty"
    assert root.attributes["persyn.person"]  # the participant it answered
    assert root.attributes["persyn.input.text"] == "tell me about the tides"
    assert root.attributes["persyn.output.text"] == "tell me about the tides"  # echo model

    [model] = [span for span in spans if span.name == "model:respond"]
    assert ancestors(model, spans) == [
        "RunActivity:generation.generate",
        "StartActivity:generation.generate",
        "turn:message",
    ]
    assert root.start_ns <= model.start_ns <= model.end_ns <= root.end_ns
    attributes = model.attributes
    assert attributes["persyn.stage"] == "respond"
    assert attributes["gen_ai.request.model"] == "scripted"
    assert attributes["gen_ai.usage.input_tokens"] > 0
    assert attributes["gen_ai.usage.output_tokens"] > 0
    assert attributes["persyn.latency_ms"] >= 0
    assert attributes["persyn.activation"] == activation
    assert PERSONA in attributes["gen_ai.system_instructions"]
    assert "tell me about the tides" in attributes["gen_ai.input.messages"]
    assert "tell me about the tides" in attributes["gen_ai.output.messages"]

    # The default tree hides Temporal's instant bookkeeping spans, keeping the nesting.
    tree = [(node.depth, node.span.name) for node in trace_tree(spans)]
    assert (0, "turn:message") in tree and (2, "model:respond") in tree
    assert (1, "RunActivity:generation.generate") in tree


async def test_metadata_policy_sends_no_prompt_or_reply_text(stack: Stack, tmp_path: Path) -> None:
    span_file = tmp_path / "spans.jsonl"
    secret = "the quokka sleeps under pier 7431"
    async with traced_worker(stack, span_file, content="metadata") as (harness, traced):
        _, activation = await one_turn(harness, secret)
        traced.flush()

    exported = span_file.read_text(encoding="utf-8")
    assert secret not in exported
    assert "quokka" not in exported
    assert "lighthouse keeper" not in exported  # the persona, i.e. the system instruction
    spans = load_trace(span_files(span_file), trace_hex(activation))
    [model] = [span for span in spans if span.name == "model:respond"]
    assert model.attributes["gen_ai.usage.input_tokens"] > 0  # structure is still there
    assert "gen_ai.input.messages" not in model.attributes
    [root] = [span for span in spans if span.parent_id is None]
    assert root.attributes["persyn.outcome"] == "spoke"
    assert "persyn.input.text" not in root.attributes


async def test_background_work_attaches_to_the_turns_trace(stack: Stack, tmp_path: Path) -> None:
    span_file = tmp_path / "spans.jsonl"
    async with traced_worker(stack, span_file) as (harness, traced):
        handle, activation = await one_turn(harness, "remember the lighthouse")
        await run_background(harness, Attribution(agent=handle, activation=activation))
        traced.flush()

    spans = load_trace(span_files(span_file), trace_hex(activation))
    [summary] = [span for span in spans if span.name == "model:summarize"]
    assert ancestors(summary, spans) == [
        "RunActivity:probe.summarize",
        "StartActivity:probe.summarize",
        "turn:message",
    ]
    [background] = [span for span in spans if span.name == "RunWorkflow:ProbeBackground"]
    assert ancestors(background, spans) == ["turn:message"]
    assert trace_ids_in(span_file) == {trace_hex(activation)}


async def test_spans_are_flushed_on_shutdown(stack: Stack, tmp_path: Path) -> None:
    span_file = tmp_path / "spans.jsonl"
    async with traced_worker(stack, span_file) as (harness, _):
        _, activation = await one_turn(harness, "good night")
        tracing.shutdown()  # what the worker process does last; no explicit flush before it

    names = {span.name for span in load_trace(span_files(span_file), trace_hex(activation))}
    assert {"turn:message", "model:respond", "RunActivity:channels.send_reply"} <= names
