"""The tool-call span helper that a tool activity wraps around each call."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from contract import attribution
from observability.tracing import Tracing, root_span_id, tool_span, trace_id
from schemas.ids import new_ulid
from schemas.models import Attribution
from schemas.settings import ContentPolicy


@pytest.fixture
def exported() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def make_tracing(exporter: InMemorySpanExporter, content: ContentPolicy) -> Tracing:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracing(provider=provider, content=content)


@pytest.fixture
def activation() -> Iterator[str]:
    activation_id = new_ulid()
    token = attribution.use(Attribution(agent="ada", activation=activation_id))
    yield activation_id
    attribution.reset(token)


def only(exporter: InMemorySpanExporter) -> ReadableSpan:
    [span] = exporter.get_finished_spans()
    return span


def test_a_tool_call_is_a_span_of_the_turn_with_arguments_and_result(
    exported: InMemorySpanExporter, activation: str
) -> None:
    traced = make_tracing(exported, "full")
    with tool_span("weather", {"city": "Brest", "days": 2}, tracing=traced) as call:
        call.set_result({"forecast": "gale force 8"})

    span = only(exported)
    assert span.name == "tool:weather"
    assert span.context is not None and span.context.trace_id == trace_id(activation)
    assert span.parent is not None and span.parent.span_id == root_span_id(activation)
    attributes = dict(span.attributes or {})
    assert attributes["persyn.tool"] == "weather"
    assert attributes["persyn.tool.argument_names"] == ("city", "days")
    assert "Brest" in str(attributes["persyn.tool.arguments"])
    assert "gale force 8" in str(attributes["persyn.tool.result"])
    assert span.status.status_code is StatusCode.UNSET


def test_metadata_policy_keeps_argument_and_result_text_out(
    exported: InMemorySpanExporter, activation: str
) -> None:
    traced = make_tracing(exported, "metadata")
    with tool_span("search", {"query": "private matter"}, tracing=traced) as call:
        call.set_result("a private result")

    attributes = dict(only(exported).attributes or {})
    assert attributes["persyn.tool.argument_names"] == ("query",)
    assert attributes["persyn.tool.result_chars"] == len("a private result")
    assert "private" not in repr(attributes)


def test_a_failing_tool_fails_its_span_and_the_error_passes_through(
    exported: InMemorySpanExporter, activation: str
) -> None:
    traced = make_tracing(exported, "metadata")
    with pytest.raises(LookupError, match="secret key 42"), tool_span("lookup", tracing=traced):
        raise LookupError("secret key 42")

    span = only(exported)
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "LookupError"  # the message is content


def test_without_tracing_the_tool_just_runs() -> None:
    with tool_span("noop", {"x": 1}, tracing=None) as call:
        call.set_result("fine")


def test_a_broken_tracer_never_breaks_the_tool(activation: str) -> None:
    class Exploding(SimpleSpanProcessor):
        def on_start(self, span: object, parent_context: object = None) -> None:
            raise RuntimeError("processor bug")

    provider = TracerProvider()
    provider.add_span_processor(Exploding(InMemorySpanExporter()))
    with tool_span("calc", {"a": 1}, tracing=Tracing(provider=provider, content="full")) as call:
        result = 1 + 1
        call.set_result(result)
    assert result == 2
