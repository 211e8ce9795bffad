"""Schemas sent to a grammar-constrained model are clamped to what its compiler accepts."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from activities.deliberation.judge import JUDGE_SCHEMA
from activities.deliberation.objections import CRITIQUE_SCHEMA
from activities.gateway.schema_limits import clamp_schema
from schemas.memory_formation import ClassificationReply, RatingReply, SummaryReply
from schemas.models import GrammarLimits

LIMITS = GrammarLimits(max_string_chars=500, max_array_items=8)


def strings(node: Any) -> list[dict[str, Any]]:
    """Every string schema in ``node`` (enum-, const- and pattern-bound ones too)."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "string":
            found.append(node)
        for value in node.values():
            found.extend(strings(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(strings(item))
    return found


def test_the_summary_limit_that_crashed_llama_cpp_is_clamped() -> None:
    original = SummaryReply.model_json_schema()
    clamped = clamp_schema(original, LIMITS)

    assert original["properties"]["summary"]["maxLength"] == 8000  # the original is untouched
    assert clamped["properties"]["summary"]["maxLength"] == 500
    assert clamped["properties"]["summary"]["minLength"] == 1


@pytest.mark.parametrize(
    "schema",
    [
        SummaryReply.model_json_schema(),
        RatingReply.model_json_schema(),
        ClassificationReply.model_json_schema(),
        JUDGE_SCHEMA,
        CRITIQUE_SCHEMA,
    ],
    ids=["summarize", "rate", "classify", "decide", "critique"],
)
def test_every_free_string_and_array_of_persyns_schemas_is_bounded(schema: dict[str, Any]) -> None:
    clamped = clamp_schema(schema, LIMITS)

    for node in strings(clamped):
        if "enum" not in node and "const" not in node:
            assert node["maxLength"] <= LIMITS.max_string_chars
    arrays = [n for n in _nodes(clamped) if n.get("type") == "array"]
    assert all(a["maxItems"] <= LIMITS.max_array_items for a in arrays)


def _nodes(node: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(node, dict):
        out.append(node)
        for value in node.values():
            out.extend(_nodes(value))
    elif isinstance(node, list):
        for item in node:
            out.extend(_nodes(item))
    return out


def test_a_call_may_tighten_strings_further() -> None:
    clamped = clamp_schema(JUDGE_SCHEMA, LIMITS, max_string_chars=100)

    assert clamped["properties"]["reason"]["maxLength"] == 100
    assert "maxLength" not in JUDGE_SCHEMA["properties"]["reason"]


def test_a_property_named_like_a_keyword_is_still_a_schema() -> None:
    # The critique's objections have a property called "type".
    clamped = clamp_schema(CRITIQUE_SCHEMA, LIMITS)
    item = clamped["properties"]["objections"]["items"]

    assert item["properties"]["type"]["maxLength"] == 500
    assert item["properties"]["type"]["type"] == "string"


def test_tighter_limits_and_bounded_values_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "maxLength": 12, "minLength": 2},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "day": {"type": "string", "format": "date"},
            "names": {"type": "array", "items": {"type": "string"}, "minItems": 20},
            "default": {"type": "string"},
        },
        "$defs": {"Note": {"type": ["string", "null"]}},
    }
    clamped = clamp_schema(schema, LIMITS)
    props = clamped["properties"]

    assert props["code"] == {"type": "string", "maxLength": 12, "minLength": 2}
    assert props["kind"] == {"type": "string", "enum": ["a", "b"]}
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["names"]["maxItems"] == 8 and props["names"]["minItems"] == 8
    assert props["names"]["items"]["maxLength"] == 500
    assert props["default"]["maxLength"] == 500
    assert clamped["$defs"]["Note"]["maxLength"] == 500


def test_a_reply_valid_under_the_clamp_is_valid_under_the_original() -> None:
    reply = {"summary": "I met Sam at the beach and we looked at tide pools."}
    clamped = clamp_schema(SummaryReply.model_json_schema(), LIMITS)

    jsonschema.validate(reply, clamped)
    SummaryReply.model_validate(reply)


def test_a_small_integer_range_becomes_an_enum_the_grammar_enforces() -> None:
    clamped = clamp_schema(RatingReply.model_json_schema(), LIMITS)
    importance = clamped["properties"]["importance"]

    assert importance["enum"] == list(range(1, 11))
    assert clamped["properties"]["novelty"]["enum"] == list(range(11))
    wide = clamp_schema({"type": "integer", "minimum": 0, "maximum": 10_000}, LIMITS)
    assert "enum" not in wide


def test_a_bounded_number_becomes_even_steps_of_its_range() -> None:
    clamped = clamp_schema(ClassificationReply.model_json_schema(), LIMITS)
    emotions = clamped["$defs"]["EmotionDistribution"]["properties"]

    assert emotions["engaged"]["enum"] == [round(i / 10, 6) for i in range(11)]
    assert "enum" not in clamp_schema({"type": "number", "minimum": 0}, LIMITS)
