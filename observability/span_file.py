"""The span store behind ``persyn trace``: OTLP/JSON lines in a file under the Persyn home.

The file exporter writes one OTLP/JSON export request per line, the same encoding an
OpenTelemetry Collector's ``file`` exporter produces (hex trace and span IDs), so the reader
here works on either: the embedded stack's own file, or a collector's file output. A file
past ``max_bytes`` rotates once to ``<name>.1.jsonl``; the reader reads both.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from pydantic import BaseModel

from store.private_files import open_private

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 64 * 1024 * 1024

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def rotated(path: Path) -> Path:
    """The previous generation of ``path`` (``spans.jsonl`` -> ``spans.1.jsonl``)."""
    return path.with_name(f"{path.stem}.1{path.suffix}")


def _hex_ids(item: dict[str, Any]) -> None:
    # Protobuf's JSON mapping writes bytes as base64; OTLP/JSON wants hex IDs.
    for key in _ID_FIELDS:
        if item.get(key):
            item[key] = base64.b64decode(item[key]).hex()


def otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """``spans`` as one OTLP/JSON ``ExportTraceServiceRequest`` line."""
    data = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in data.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _hex_ids(span)
                for link in span.get("links", []):
                    _hex_ids(link)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


class SpanFileExporter(SpanExporter):
    """Appends finished spans to a file as OTLP/JSON lines (runs on the batch thread)."""

    def __init__(self, path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.path = path
        self._max_bytes = max_bytes
        self._lock = threading.Lock()

    def _rotate_if_full(self) -> None:
        try:
            if self.path.stat().st_size >= self._max_bytes:
                self.path.replace(rotated(self.path))
        except FileNotFoundError:
            pass

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write one line for the batch."""
        try:
            line = otlp_json(spans) + "\n"
            with self._lock:
                self._rotate_if_full()
                with open_private(self.path, "a") as out:
                    out.write(line)
        except Exception:
            log.warning("could not write %d spans to the span file", len(spans), exc_info=True)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing is held open between batches."""

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Every batch is written when exported."""
        return True


class SpanView(BaseModel):
    """One span as read back from the span store."""

    trace_id: str
    span_id: str
    parent_id: str | None = None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    error: str | None = None

    @property
    def duration_ms(self) -> float:
        """How long the span lasted."""
        return (self.end_ns - self.start_ns) / 1e6


def _value(any_value: dict[str, Any]) -> Any:
    if "stringValue" in any_value:
        return any_value["stringValue"]
    if "intValue" in any_value:
        return int(any_value["intValue"])
    if "doubleValue" in any_value:
        return float(any_value["doubleValue"])
    if "boolValue" in any_value:
        return bool(any_value["boolValue"])
    if "arrayValue" in any_value:
        return [_value(v) for v in any_value["arrayValue"].get("values", [])]
    return None


def _view(span: dict[str, Any]) -> SpanView:
    status = span.get("status", {})
    return SpanView(
        trace_id=span["traceId"],
        span_id=span["spanId"],
        parent_id=span.get("parentSpanId") or None,
        name=span.get("name", ""),
        start_ns=int(span.get("startTimeUnixNano", 0)),
        end_ns=int(span.get("endTimeUnixNano", 0)),
        attributes={a["key"]: _value(a.get("value", {})) for a in span.get("attributes", [])},
        # Status code 2 is ERROR in OTLP.
        error=(status.get("message") or "error") if status.get("code") == 2 else None,
    )


def _spans_in(line: str) -> Iterator[dict[str, Any]]:
    data = json.loads(line)
    for resource in data.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            yield from scope.get("spans", [])


def load_trace(paths: Iterable[Path], trace_id: str) -> list[SpanView]:
    """Every span of ``trace_id`` (32 hex digits) in ``paths``, oldest first.

    A line that does not mention the trace ID is skipped unparsed, so a lookup stays quick on
    a large file; an unreadable line is skipped with a warning.
    """
    wanted = trace_id.lower()
    found: dict[str, SpanView] = {}
    for path in paths:
        if not path.exists():
            continue
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if wanted not in line:
                    continue
                try:
                    for span in _spans_in(line):
                        if span.get("traceId") == wanted:
                            view = _view(span)
                            found[view.span_id] = view
                except (ValueError, KeyError, TypeError):
                    log.warning("skipped an unreadable line in %s", path.name)
    return sorted(found.values(), key=lambda s: (s.start_ns, s.end_ns))


def span_files(path: Path) -> list[Path]:
    """The span file and its rotated generation, oldest first."""
    return [rotated(path), path]


BOOKKEEPING_PREFIXES = (
    "StartActivity:",
    "StartChildWorkflow:",
    "RunWorkflow:",
    "CompleteWorkflow:",
    "SignalExternalWorkflow:",
    "SignalChildWorkflow:",
    "HandleSignal:",
    "HandleQuery:",
    "HandleUpdate:",
    "ValidateUpdate:",
)
"""Temporal's instant (zero-duration) workflow spans: hidden in the default tree view."""


class TraceNode(BaseModel):
    """A span placed in the tree: its depth and its start relative to the trace's first span."""

    span: SpanView
    depth: int
    offset_ms: float


def _bookkeeping(span: SpanView) -> bool:
    return span.start_ns == span.end_ns and span.name.startswith(BOOKKEEPING_PREFIXES)


def trace_tree(spans: Sequence[SpanView], *, bookkeeping: bool = False) -> list[TraceNode]:
    """The spans as a depth-first tree in start order.

    Args:
        spans: One trace's spans.
        bookkeeping: Keep Temporal's instant workflow spans; when dropped, their children
            move up to the nearest kept ancestor.
    """
    by_id = {span.span_id: span for span in spans}

    def shown_parent(span: SpanView) -> str | None:
        parent = by_id.get(span.parent_id) if span.parent_id else None
        while parent is not None and not bookkeeping and _bookkeeping(parent):
            parent = by_id.get(parent.parent_id) if parent.parent_id else None
        return parent.span_id if parent is not None else None

    kept = [span for span in spans if bookkeeping or not _bookkeeping(span)]
    children: dict[str | None, list[SpanView]] = {}
    for span in kept:
        children.setdefault(shown_parent(span), []).append(span)
    origin = min((span.start_ns for span in spans), default=0)
    nodes: list[TraceNode] = []

    def walk(parent: str | None, depth: int) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: (s.start_ns, s.end_ns)):
            offset = (span.start_ns - origin) / 1e6
            nodes.append(TraceNode(span=span, depth=depth, offset_ms=offset))
            walk(span.span_id, depth + 1)

    walk(None, 0)
    return nodes
