"""Tracing (Appendix D): one trace per activation, set up from settings, fail-soft, flushed on exit.

Each activation is one trace whose ID is the activation's ULID (128 bits, exactly an OTLP trace
ID), so ``persyn trace ACTIVATION_ID`` and a collector's trace search need no lookup table.
The trace's root span covers the turn; Temporal's ``TracingInterceptor`` (subclassed here) nests
the workflow's activity spans under it, and the model gateway and tools add their spans inside
those. Background work inherits the activation through the attribution header, so it lands in
the same trace. Agent and conversation workflows live for hours or months and open no spans.

Content policy: ``full`` puts prompts, replies, tool arguments and results on spans;
``metadata`` keeps stage, model, tokens and timing only, and no conversation text leaves the
process. Tracing is a side effect: exporters run on a background thread, every hook swallows
its own failures, and a missing collector only loses spans.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import opentelemetry.context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode
from opentelemetry.trace import TraceFlags as _TraceFlags
from ulid import ULID

from contract import attribution
from observability.span_file import SpanFileExporter
from schemas.settings import ContentPolicy, Settings

log = logging.getLogger(__name__)

ACTIVATION_PREFIX = "activation/"
MAX_ATTRIBUTE_CHARS = 256 * 1024
"""Longest attribute value kept (a long prompt is cut, never the span)."""

# A root span's IDs are fixed by its activation; the ID generator honours them while set.
_forced_ids: ContextVar[tuple[int, int] | None] = ContextVar("persyn_forced_ids", default=None)


# -- identifiers ----------------------------------------------------------------------------------


def trace_id(activation_id: str) -> int:
    """The trace ID of an activation: its ULID read as a 128-bit number."""
    return int(ULID.from_str(activation_id))


def trace_hex(activation_id: str) -> str:
    """:func:`trace_id` as the 32 hex digits collectors and ``persyn trace`` use."""
    return f"{trace_id(activation_id):032x}"


def root_span_id(activation_id: str) -> int:
    """The turn span's ID: the low 64 (random) bits of the activation's ULID."""
    return trace_id(activation_id) & 0xFFFF_FFFF_FFFF_FFFF or 1


def activation_of(workflow_id: str) -> str | None:
    """The activation ID of an ``activation/{ulid}`` workflow ID, else ``None``."""
    if not workflow_id.startswith(ACTIVATION_PREFIX):
        return None
    candidate = workflow_id.removeprefix(ACTIVATION_PREFIX)
    try:
        ULID.from_str(candidate)
    except ValueError:
        return None
    return candidate


def turn_context(activation_id: str) -> opentelemetry.context.Context:
    """A context whose current span is the activation's turn span (to parent spans under it)."""
    parent = SpanContext(
        trace_id=trace_id(activation_id),
        span_id=root_span_id(activation_id),
        is_remote=True,
        trace_flags=_TraceFlags(_TraceFlags.SAMPLED),
    )
    return trace.set_span_in_context(NonRecordingSpan(parent), opentelemetry.context.Context())


class _TurnIds(RandomIdGenerator):
    """Random IDs, except for a turn span, whose IDs derive from its activation."""

    def generate_span_id(self) -> int:
        forced = _forced_ids.get()
        return forced[1] if forced else super().generate_span_id()

    def generate_trace_id(self) -> int:
        forced = _forced_ids.get()
        return forced[0] if forced else super().generate_trace_id()


# -- setup ----------------------------------------------------------------------------------------


@dataclass
class Tracing:
    """A tracer provider with its exporters, and the content policy spans follow."""

    provider: TracerProvider
    content: ContentPolicy
    tracer: trace.Tracer = field(init=False)

    def __post_init__(self) -> None:
        # Turn spans need their fixed IDs, whoever built the provider (tests build their own).
        if not isinstance(self.provider.id_generator, _TurnIds):
            self.provider.id_generator = _TurnIds()
        self.tracer = self.provider.get_tracer("persyn")

    @property
    def full(self) -> bool:
        """Whether spans may carry conversation content."""
        return self.content == "full"

    def turn_span(
        self, activation_id: str, name: str, *, start_ns: int, attributes: Mapping[str, Any]
    ) -> trace.Span:
        """Start the root span of an activation with its fixed IDs (it has no parent)."""
        token = _forced_ids.set((trace_id(activation_id), root_span_id(activation_id)))
        try:
            return self.tracer.start_span(
                name,
                context=opentelemetry.context.Context(),
                kind=SpanKind.SERVER,
                attributes=dict(attributes),
                start_time=start_ns,
            )
        finally:
            _forced_ids.reset(token)

    def flush(self, timeout_s: float = 10.0) -> None:
        """Export buffered spans now (tests, ``persyn trace`` right after a turn)."""
        self.provider.force_flush(int(timeout_s * 1000))

    def close(self, timeout_s: float = 10.0) -> None:
        """Flush and stop the exporters, waiting at most ``timeout_s`` (an absent collector)."""
        _bounded(self.provider.shutdown, timeout_s)
        for key, tracing in list(_configured.items()):
            if tracing is self:
                del _configured[key]


def _bounded(work: Any, timeout_s: float) -> None:
    # A daemon thread, so an unreachable collector cannot hold up a worker's exit.
    thread = threading.Thread(target=work, name="persyn-trace-flush", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        log.warning("spans not flushed within %.0fs; the rest are dropped", timeout_s)


_configured: dict[tuple[object, ...], Tracing] = {}


def _exporter(name: str, settings: Settings) -> SpanExporter:
    if name == "file":
        return SpanFileExporter(settings.span_file)
    # Imported only when used: it brings an HTTP client along.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=settings.tracing_endpoint, timeout=5)


def setup(settings: Settings) -> Tracing | None:
    """The tracing ``settings`` describe (``None`` when off); one per configuration per process.

    The client interceptor and the gateway call this separately and share the result. An
    exporter that cannot be built is left out and logged.
    """
    if not settings.tracing_exporters:
        return None
    key = (
        tuple(settings.tracing_exporters),
        settings.tracing_endpoint,
        settings.span_file,
        settings.tracing_content,
    )
    if key in _configured:
        return _configured[key]
    provider = TracerProvider(
        resource=Resource.create({"service.name": "persyn"}),
        id_generator=_TurnIds(),
        span_limits=SpanLimits(max_attribute_length=MAX_ATTRIBUTE_CHARS),
    )
    for name in dict.fromkeys(settings.tracing_exporters):
        try:
            exporter = _exporter(name, settings)
            # A one-second batch delay: `persyn trace` can read a turn right after it ends.
            provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=1000))
        except Exception:
            log.error(
                "span exporter %s could not be built; tracing without it", name, exc_info=True
            )
    tracing = Tracing(provider=provider, content=settings.tracing_content)
    _configured[key] = tracing
    return tracing


def current() -> Tracing | None:
    """The tracing most recently set up in this process (for helpers with no handle to it)."""
    return next(reversed(_configured.values()), None)


def shutdown(timeout_s: float = 10.0) -> None:
    """Flush and stop every tracer provider of the process (a worker's last step)."""
    for tracing in list(_configured.values()):
        tracing.close(timeout_s)


# -- content --------------------------------------------------------------------------------------


def as_json(value: Any) -> str:
    """A span attribute for structured content (arguments, messages, results)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def parent_context() -> opentelemetry.context.Context | None:
    """Where a new span nests: the current span, else the bound activation's turn, else nowhere."""
    if trace.get_current_span().get_span_context().is_valid:
        return None
    activation = attribution.current().activation
    return turn_context(activation) if activation else None


# -- tool calls -----------------------------------------------------------------------------------


class ToolSpan:
    """The span of one tool call; :meth:`set_result` records what the tool returned."""

    def __init__(self, span: trace.Span | None, tracing: Tracing | None) -> None:
        self._span = span
        self._full = tracing is not None and tracing.full

    def set_result(self, result: Any) -> None:
        """Record the tool's result (its text only under the ``full`` content policy)."""
        if self._span is None:
            return
        try:
            text = result if isinstance(result, str) else as_json(result)
            self._span.set_attribute("persyn.tool.result_chars", len(text))
            if self._full:
                self._span.set_attribute("persyn.tool.result", text)
        except Exception:
            log.debug("tool span result not recorded", exc_info=True)


@contextmanager
def tool_span(
    name: str, arguments: Mapping[str, Any] | None = None, *, tracing: Tracing | None = None
) -> Iterator[ToolSpan]:
    """A span around one tool call, nested under the current span (or the turn).

    Tracing never changes the call: with tracing off or broken the block just runs, and an
    exception from the tool is recorded and re-raised unchanged.

    Args:
        name: The tool's name.
        arguments: What the tool was given (recorded only under the ``full`` policy; the
            argument names are always recorded).
        tracing: The tracing to use; defaults to the process's (:func:`current`).

    Yields:
        A handle to record the result with.
    """
    tracing = tracing or current()
    span: trace.Span | None = None
    if tracing is not None:
        try:
            span = tracing.tracer.start_span(
                f"tool:{name}", context=parent_context(), kind=SpanKind.INTERNAL
            )
            span.set_attribute("persyn.tool", name)
            span.set_attribute("persyn.tool.argument_names", sorted(arguments or {}))
            if tracing.full:
                span.set_attribute("persyn.tool.arguments", as_json(dict(arguments or {})))
        except Exception:
            log.debug("tool span not started", exc_info=True)
            span = None
    handle = ToolSpan(span, tracing)
    try:
        yield handle
    except BaseException as err:
        end_span(span, err, full=tracing is not None and tracing.full)
        raise
    end_span(span, None, full=False)


def end_span(span: trace.Span | None, error: BaseException | None, *, full: bool) -> None:
    """End ``span``, marking it failed by ``error`` (its message only under ``full``)."""
    if span is None:
        return
    try:
        if error is not None:
            message = f"{type(error).__name__}: {error}" if full else type(error).__name__
            span.set_status(Status(StatusCode.ERROR, message))
        span.end()
    except Exception:
        log.debug("span not ended", exc_info=True)
