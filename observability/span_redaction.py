"""Redaction of the span file: forgotten or expired content out of the spans ``persyn trace`` reads.

Under the ``full`` content policy, spans carry prompts, replies and tool arguments. Forgetting
a memory replaces its text wherever it occurs in a span; retention strips the content
attributes from an agent's spans that ended before the cutoff, keeping their metadata (stage,
model, tokens, timing). Both rewrite the file (and its rotated generation) in place.

The exporter may append while a file is rewritten: lines written meanwhile are carried over
before the rewritten file replaces the old one, so only a line appended in the last instant of
the swap can be lost; a span file is diagnostic material, never a source of truth.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from observability.span_file import rotated
from store.private_files import open_private
from store.queries.erasure import MIN_REDACT_CHARS, REDACTED, json_escaped, variants

log = logging.getLogger(__name__)

CONTENT_KEYS = frozenset(
    {
        "gen_ai.system_instructions",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.definitions",
        "persyn.tool.arguments",
        "persyn.tool.result",
        "persyn.input.text",
        "persyn.output.text",
        "persyn.outcome.reason",
    }
)
"""Span attributes that carry conversation content (recorded only under ``full``).

Kept in step with ``observability.tracing``, ``observability.interceptor`` and
``observability.model_call``; the forget audit test fails on a key missing here.
"""

AGENT_KEY = "persyn.agent"
"""The attribute naming the agent a span worked for."""

SpanEdit = Callable[[dict[str, Any]], bool]
"""Edits one OTLP/JSON span in place; returns whether it changed."""


@dataclass(frozen=True)
class Redaction:
    """An edit of spans, and the strings a line must hold for the edit to change anything.

    Lines holding none of ``hints`` are copied without being parsed: a file written under the
    ``metadata`` policy, or a forgotten text that was never traced, costs a substring scan.
    """

    edit: SpanEdit
    hints: tuple[str, ...]

    def may_change(self, line: str) -> bool:
        """Whether ``line`` could hold something this redaction changes."""
        return any(hint in line for hint in self.hints)


# Characters JSON escapes: a run without them reads the same at any depth of encoding.
_ESCAPED = re.compile(r'["\\\x00-\x1f]+')


def _plain_run(text: str) -> str:
    return max(_ESCAPED.split(text), key=len)


def _spans(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for resource in request.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            yield from scope.get("spans", [])


def _strings(value: dict[str, Any]) -> Iterator[dict[str, Any]]:
    # Yields every AnyValue that holds a string, arrays included.
    if "stringValue" in value:
        yield value
    for item in value.get("arrayValue", {}).get("values", []):
        yield from _strings(item)


def _cut_tail(value: str, form: str) -> str:
    # A span attribute is cut at the tracer's length limit: a text may end it half-written.
    start = value.rfind(form[:MIN_REDACT_CHARS])
    if start < 0 or not form.startswith(value[start:]):
        return value
    return value[:start] + REDACTED


def replace_texts(texts: Sequence[str]) -> Redaction:
    """Replace each of ``texts`` (as is and JSON-escaped) in every string attribute."""
    forms = sorted(
        {f for text in texts for v in variants(text) for f in (v, json_escaped(v)) if f},
        key=len,
        reverse=True,
    )

    def edit(span: dict[str, Any]) -> bool:
        changed = False
        for attribute in span.get("attributes", []):
            for value in _strings(attribute.get("value", {})):
                before = value["stringValue"]
                after = before
                for form in forms:
                    after = _cut_tail(after.replace(form, REDACTED), form)
                if after != before:
                    value["stringValue"] = after
                    changed = True
        return changed

    # The plain run finds the whole text at any depth of encoding, the opening a cut-off one.
    hints = tuple(
        {h for text in texts for v in variants(text) for h in (_plain_run(v), v[:MIN_REDACT_CHARS])}
        - {""}
    )
    return Redaction(edit, hints)


def strip_content(traces: set[str], before: datetime) -> Redaction:
    """Drop the content attributes of spans in ``traces`` that ended before ``before``.

    Whole traces are chosen (:func:`agent_traces`) because not every span names its agent: a
    tool call's span sits in its turn's trace.
    """
    cutoff_ns = int(before.timestamp() * 1_000_000_000)

    def edit(span: dict[str, Any]) -> bool:
        if span.get("traceId") not in traces or int(span.get("endTimeUnixNano", 0)) >= cutoff_ns:
            return False
        attributes = span.get("attributes", [])
        kept = [a for a in attributes if a.get("key") not in CONTENT_KEYS]
        status = span.get("status", {})
        # Under ``full`` a failed span's message may quote content; its code stays.
        if len(kept) == len(attributes) and not status.get("message"):
            return False
        span["attributes"] = kept
        status.pop("message", None)
        return True

    return Redaction(edit, (*CONTENT_KEYS, '"message"'))


def agent_traces(path: Path | None, agent: str) -> set[str]:
    """IDs of the traces in the span file (both generations) with a span working for ``agent``."""
    found: set[str] = set()
    for generation in (rotated(path), path) if path is not None else ():
        try:
            lines = generation.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            continue
        for line in lines:
            if agent not in line:
                continue
            try:
                request = json.loads(line)
            except ValueError:
                continue
            for span in _spans(request):
                for attribute in span.get("attributes", []):
                    if (
                        attribute.get("key") == AGENT_KEY
                        and attribute.get("value", {}).get("stringValue") == agent
                    ):
                        found.add(str(span.get("traceId")))
    return found


def _rewrite_line(line: str, redaction: Redaction) -> tuple[str, int]:
    if not redaction.may_change(line):
        return line, 0
    try:
        request = json.loads(line)
    except ValueError:
        return line, 0  # not ours to judge; the reader skips it too
    changed = sum(redaction.edit(span) for span in _spans(request))
    if not changed:
        return line, 0
    return json.dumps(request, separators=(",", ":"), ensure_ascii=False) + "\n", changed


def _rewrite(path: Path, redaction: Redaction) -> int:
    try:
        with path.open("rb") as source:
            data = source.read()
    except FileNotFoundError:
        return 0
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    out, changed = [], 0
    for line in lines:
        new, count = _rewrite_line(line, redaction)
        out.append(new)
        changed += count
    if not changed:
        return 0
    temporary = path.with_name(f".{path.name}.redacting")
    with open_private(temporary, "w") as target:
        target.writelines(out)
        # Carry over what the exporter appended while this pass ran.
        with path.open("rb") as source:
            source.seek(len(data))
            tail = source.read().decode("utf-8", errors="replace")
        for line in tail.splitlines(keepends=True):
            target.write(_rewrite_line(line, redaction)[0])
        target.flush()
        os.fsync(target.fileno())
    temporary.replace(path)
    return changed


def redact_span_file(path: Path | None, redaction: Redaction) -> int:
    """Apply ``redaction`` to every span of the span file at ``path`` and its rotated generation.

    Returns the number of spans changed. Fails soft: a file that cannot be rewritten is logged
    and left as it was.
    """
    if path is None:
        return 0
    changed = 0
    for generation in (rotated(path), path):
        try:
            changed += _rewrite(generation, redaction)
        except OSError:
            log.warning("could not redact the span file %s", generation, exc_info=True)
    return changed
