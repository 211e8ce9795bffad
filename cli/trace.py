"""``persyn trace ACTIVATION_ID``: one activation's spans as a tree, with timings.

The trace ID of an activation is its ULID, so no lookup is needed: the spans are read from the
span file the file exporter writes under the Persyn home, or from any OTLP/JSON file given with
``--file`` (an OpenTelemetry Collector's ``file`` exporter writes the same format).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import UserError, friendly_errors, run
from observability.span_file import SpanView, TraceNode, span_files
from observability.tracing import ACTIVATION_PREFIX, trace_hex
from schemas.ids import check_ulid
from schemas.settings import get_settings

_SHOWN = (
    ("persyn.agent", "agent"),
    ("persyn.channel", "channel"),
    ("persyn.outcome", "outcome"),
    ("gen_ai.response.model", "model"),
    ("gen_ai.usage.input_tokens", "in"),
    ("gen_ai.usage.output_tokens", "out"),
    ("persyn.tokens.cached_read", "cached"),
    ("persyn.cost_usd", "usd"),
    ("persyn.tool.result_chars", "result chars"),
)
_TEXT = (("persyn.input.text", "input"), ("persyn.output.text", "reply"))
_TEXT_CHARS = 100


_ROOT_ONLY = {"persyn.agent", "persyn.channel"}


def _details(span: SpanView, *, root: bool) -> str:
    parts = []
    for key, label in _SHOWN:
        if key in _ROOT_ONLY and not root:
            continue  # the turn names them once for the whole tree
        value: Any = span.attributes.get(key)
        if value is None or value == 0:
            continue
        parts.append(f"{label}={value:.6f}" if isinstance(value, float) else f"{label}={value}")
    if span.error:
        parts.append(f"ERROR {span.error}")
    return "  ".join(parts)


def _prefixes(nodes: list[TraceNode]) -> list[str]:
    """Box-drawing prefixes: a node is last among its siblings if no later sibling follows."""
    prefixes: list[str] = []
    open_levels: list[bool] = []
    for i, node in enumerate(nodes):
        later = (n.depth for n in nodes[i + 1 :] if n.depth <= node.depth)
        last = next(later, -1) < node.depth
        del open_levels[node.depth :]
        if node.depth == 0:
            prefixes.append("")
        else:
            bars = "".join("│  " if more else "   " for more in open_levels[1:])
            prefixes.append(bars + ("└─ " if last else "├─ "))
        open_levels.append(not last)
    return prefixes


def _outcome(nodes: list[TraceNode]) -> str:
    """The turn's outcome for the header; a fallback reply is flagged, not hidden in JSON."""
    for node in nodes:
        span = node.span
        if span.parent_id is None and span.name.startswith("turn:"):
            outcome = span.attributes.get("persyn.outcome")
            if outcome == "degraded" or span.attributes.get("persyn.degraded") is True:
                return "  outcome=DEGRADED (the model provider failed; fallback reply sent)"
            return f"  outcome={outcome}" if outcome else ""
    return ""


def render(activation_id: str, nodes: list[TraceNode]) -> str:
    """The tree: start offset, duration, name and key attributes of each span."""
    spans = [node.span for node in nodes]
    total = (max(s.end_ns for s in spans) - min(s.start_ns for s in spans)) / 1e6
    header = f"activation {activation_id}  trace {trace_hex(activation_id)}  {total:.1f} ms"
    lines = [header + _outcome(nodes)]
    for node, prefix in zip(nodes, _prefixes(nodes), strict=True):
        span = node.span
        timing = f"{node.offset_ms:+10.1f} ms {span.duration_ms:10.1f} ms"
        details = _details(span, root=node.depth == 0)
        lines.append(f"{timing}  {prefix}{span.name}  {details}".rstrip())
        for key, label in _TEXT:
            text = span.attributes.get(key)
            if isinstance(text, str):
                shown = text if len(text) <= _TEXT_CHARS else text[:_TEXT_CHARS] + "..."
                lines.append(f"{'':27}  {' ' * len(prefix)}   {label}: {json.dumps(shown)}")
    if not any(
        node.span.parent_id is None and node.span.name.startswith("turn:") for node in nodes
    ):
        lines.append("(no turn span: the activation is still running, or was terminated)")
    return "\n".join(lines)


def _expand(paths: list[Path]) -> list[Path]:
    """Files as given; a directory (a collector's rotating output) as its files, oldest first."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                (p for p in path.iterdir() if p.is_file()), key=lambda p: p.stat().st_mtime
            )
        else:
            found.append(path)
    return found


@friendly_errors
def trace(
    activation_id: Annotated[
        str,
        typer.Argument(
            help="The activation's ULID (or its workflow ID activation/ULID), or the event ID "
            "`persyn send` prints."
        ),
    ],
    file: Annotated[
        list[Path] | None,
        typer.Option(
            "--file", help="Read this OTLP/JSON span file or directory instead (repeatable)."
        ),
    ] = None,
    bookkeeping: Annotated[
        bool, typer.Option("--all", help="Also show Temporal's instant workflow spans.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the spans as JSON.")] = False,
) -> None:
    """Print the trace of one activation: its spans as a tree, with timings."""
    given = check_ulid(activation_id.removeprefix(ACTIVATION_PREFIX), what="activation id")
    from usecases.traces import activation_trace, trace_in_files  # the store, when read

    settings = get_settings()
    paths = _expand(file) if file else span_files(settings.span_file)
    # An activation's spans are read from the files alone; `persyn send` prints the event's
    # ID, and the activation that handled it is looked up in the store only then.
    found = trace_in_files(paths, given, bookkeeping=bookkeeping) or run(
        activation_trace(settings=settings, given=given, paths=paths, bookkeeping=bookkeeping)
    )
    if found is not None and found.activation_id != given:
        typer.echo(f"event {given} was handled by activation {found.activation_id}")
    if found is None:
        where = ", ".join(p.name for p in paths if p.exists()) or "no span file yet"
        raise UserError(
            f"no spans for activation or event {given} ({where}): an event still in its "
            "inbox has no trace yet; the embedded stack traces to its span file by default, "
            "elsewhere set PERSYN_TRACING_EXPORTERS=file or pass the collector's file with --file"
        )
    if as_json:
        typer.echo(json.dumps([node.model_dump() for node in found.nodes], indent=2))
    else:
        typer.echo(render(found.activation_id, found.nodes))
