"""One activation's trace from a client: its spans as a tree, found by activation or event ID.

The trace ID of an activation is its ULID, so the spans are read straight from the span file
the file exporter writes under the Persyn home (or files the caller names). An event ID is
turned into the activation that handled it through the store.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from observability.span_file import TraceNode, load_trace, span_files, trace_tree
from observability.tracing import trace_hex
from schemas.settings import Settings
from usecases.activations import activations_for_event


@dataclass(frozen=True)
class ActivationTrace:
    """The activation whose spans were found, and its tree."""

    activation_id: str
    nodes: list[TraceNode]


def trace_in_files(
    files: list[Path], activation_id: str, *, bookkeeping: bool = False
) -> ActivationTrace | None:
    """The trace of activation ``activation_id`` in ``files``, or ``None`` with no span of it.

    Reads files only: a command can show a trace without a store or an event loop.
    """
    spans = load_trace(files, trace_hex(activation_id))
    return (
        ActivationTrace(activation_id, trace_tree(spans, bookkeeping=bookkeeping))
        if spans
        else None
    )


async def activation_trace(
    *,
    settings: Settings,
    given: str,
    paths: list[Path] | None = None,
    bookkeeping: bool = False,
) -> ActivationTrace | None:
    """The trace of activation ``given``, or of the activation that handled event ``given``.

    ``None`` when no span of either is in the files (yet).
    """
    files = paths if paths is not None else span_files(settings.span_file)
    found = await asyncio.to_thread(trace_in_files, files, given, bookkeeping=bookkeeping)
    if found is not None:
        return found
    for handled in await _handled(settings, given):
        found = await asyncio.to_thread(trace_in_files, files, handled, bookkeeping=bookkeeping)
        if found is not None:
            return found
    return None


async def _handled(settings: Settings, event_id: str) -> list[str]:
    """The activations recorded for ``event_id``; none when the store cannot be read.

    The spans may still be read from the file: the caller says what was looked for.
    """
    try:
        return await activations_for_event(settings=settings, event_id=event_id)
    except Exception:
        return []
