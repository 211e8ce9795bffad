"""Span-file redaction: both generations, whole traces, and lines appended while it runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from observability.span_file import rotated
from observability.span_redaction import (
    Redaction,
    agent_traces,
    redact_span_file,
    replace_texts,
    strip_content,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def span(trace: str, name: str, end: datetime, **attributes: str) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": name,
        "name": name,
        "startTimeUnixNano": str(int(end.timestamp() * 1e9) - 1000),
        "endTimeUnixNano": str(int(end.timestamp() * 1e9)),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
        "status": {"code": 2, "message": f"failed on {attributes.get('persyn.input.text', '')}"},
    }


def line(*spans: dict[str, Any]) -> str:
    request = {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}
    return json.dumps(request) + "\n"


def test_forgetting_replaces_the_text_in_both_generations_even_json_escaped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "spans.jsonl"
    text = 'I remember the "blue" kite\nover the dunes.'
    escaped = json.dumps([{"content": text}])
    rotated(path).write_text(line(span("t1", "a", NOW, **{"gen_ai.input.messages": escaped})))
    path.write_text(line(span("t2", "b", NOW, **{"gen_ai.system_instructions": f"[x] {text}"})))

    assert redact_span_file(path, replace_texts([text])) == 2
    for generation in (rotated(path), path):
        content = generation.read_text()
        assert "blue" not in content and "[forgotten]" in content
    assert redact_span_file(path, replace_texts([text])) == 0  # nothing left to change


def test_a_text_cut_off_by_the_attribute_limit_is_redacted_too(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    text = "I remember that Ada hid the spare key under the blue flowerpot."
    cut = "[recall] " + text[:30]  # the tracer's length limit fell inside the memory
    path.write_text(line(span("t1", "a", NOW, **{"gen_ai.system_instructions": cut})))
    assert redact_span_file(path, replace_texts([text])) == 1
    assert "spare key" not in path.read_text() and "[recall] [forgotten]" in path.read_text()


def test_retention_strips_content_of_the_agents_old_traces_only(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    old, new = NOW - timedelta(days=3), NOW
    path.write_text(
        line(
            span("old", "turn1", old, **{"persyn.agent": "ada", "persyn.input.text": "one"}),
            # A tool span names no agent: it goes with its turn's trace.
            span("old", "tool1", old, **{"persyn.tool.result": "two"}),
            span("new", "turn2", new, **{"persyn.agent": "ada", "persyn.input.text": "three"}),
            span("bob", "turn3", old, **{"persyn.agent": "bob", "persyn.input.text": "four"}),
        )
    )
    traces = agent_traces(path, "ada")
    assert traces == {"old", "new"}

    assert redact_span_file(path, strip_content(traces, NOW - timedelta(days=1))) == 2
    spans = json.loads(path.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    kept = {s["spanId"]: {a["key"] for a in s["attributes"]} for s in spans}
    assert kept == {
        "turn1": {"persyn.agent"},
        "tool1": set(),
        "turn2": {"persyn.agent", "persyn.input.text"},
        "turn3": {"persyn.agent", "persyn.input.text"},
    }
    content = path.read_text()
    assert '"one"' not in content and '"two"' not in content
    assert '"three"' in content and '"four"' in content  # newer, or another agent's
    assert "failed on one" not in content and "failed on three" in content


def test_lines_without_a_hint_are_copied_unparsed(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    plain = span("t1", "a", NOW, **{"persyn.agent": "ada"})
    plain["status"] = {}  # under the metadata policy: no content, no error message
    metadata_only = line(plain)
    path.write_text(metadata_only + "not json at all\n")
    assert redact_span_file(path, strip_content({"t1"}, NOW + timedelta(days=1))) == 0
    assert redact_span_file(path, replace_texts(["nothing like this was traced"])) == 0
    assert path.read_text() == metadata_only + "not json at all\n"


def test_lines_appended_while_the_file_is_rewritten_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_text(line(span("t1", "a", NOW, **{"persyn.output.text": "secret words here"})))
    late = line(span("t2", "b", NOW, **{"persyn.output.text": "secret words here, again"}))
    redact = replace_texts(["secret words here"])
    appended = False

    def edit(item: dict[str, Any]) -> bool:
        nonlocal appended
        if not appended:  # the exporter writes a batch while the pass runs
            appended = True
            with path.open("a") as out:
                out.write(late)
        return redact.edit(item)

    assert redact_span_file(path, Redaction(edit, redact.hints)) == 1
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and "secret" not in path.read_text()
