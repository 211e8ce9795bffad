"""Keeping JSON schemas within what a grammar-constrained model can compile.

llama.cpp turns a JSON schema into a grammar, expanding every bounded repetition (a string's
``maxLength``, an array's ``maxItems``) into that many rules. Past a few thousand it refuses the
grammar, and llama-cpp-python then crashes the process serving the model. So every schema sent
to such a provider is clamped first: strings get at most ``max_string_chars`` characters and
arrays at most ``max_array_items`` items, whatever the schema asked for. llama-cpp-python's
converter also ignores ``minimum`` and ``maximum`` (a "1 to 10" rating came back as
1234567890, an emotion's 0-to-1 probability as 1.5), so a small bounded integer range becomes
the ``enum`` of its values and a bounded number the ``enum`` of eleven even steps. The
clamped schema only narrows the original, so a reply valid under it is valid under the
original too.
"""

from __future__ import annotations

import copy
from typing import Any

from schemas.models import GrammarLimits

_FREE_FORM_KEYS = ("enum", "const", "pattern", "format")
"""A string constrained by one of these has its own bounded grammar; a length adds nothing."""


def _types(node: dict[str, Any]) -> set[str]:
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _clamp_string(node: dict[str, Any], limit: int) -> None:
    if any(key in node for key in _FREE_FORM_KEYS):
        return
    bound = min(int(node.get("maxLength", limit)), limit)
    node["maxLength"] = bound
    if "minLength" in node:
        node["minLength"] = min(int(node["minLength"]), bound)


def _clamp_array(node: dict[str, Any], limit: int) -> None:
    bound = min(int(node.get("maxItems", limit)), limit)
    node["maxItems"] = bound
    if "minItems" in node:
        node["minItems"] = min(int(node["minItems"]), bound)


_NAMED_SCHEMAS = ("properties", "patternProperties", "$defs", "definitions")
"""Keys whose value maps names to schemas (a property may well be called ``type``)."""

_VALUES = ("enum", "const", "default", "examples")
"""Keys whose value is data, not a schema."""


MAX_INTEGER_CHOICES = 256
"""An integer range up to this many values is spelled out as an enum the grammar enforces."""


def _bound_integer(node: dict[str, Any]) -> None:
    if "enum" in node or "const" in node:
        return
    low, high = node.get("minimum"), node.get("maximum")
    if isinstance(node.get("exclusiveMinimum"), int):
        low = node["exclusiveMinimum"] + 1
    if isinstance(node.get("exclusiveMaximum"), int):
        high = node["exclusiveMaximum"] - 1
    if not isinstance(low, int) or not isinstance(high, int):
        return
    if 0 <= high - low < MAX_INTEGER_CHOICES:
        node["enum"] = list(range(low, high + 1))


NUMBER_STEPS = 10
"""A bounded number is offered as this many even steps of its range (0, 0.1, ... 1)."""


def _bound_number(node: dict[str, Any]) -> None:
    if "enum" in node or "const" in node:
        return
    low, high = node.get("minimum"), node.get("maximum")
    if not isinstance(low, int | float) or not isinstance(high, int | float) or high <= low:
        return
    step = (high - low) / NUMBER_STEPS
    node["enum"] = [round(low + i * step, 6) for i in range(NUMBER_STEPS + 1)]


def _walk(node: Any, limits: GrammarLimits, string_chars: int) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item, limits, string_chars)
        return
    if not isinstance(node, dict):
        return
    kinds = _types(node)
    if "string" in kinds:
        _clamp_string(node, string_chars)
    if "array" in kinds:
        _clamp_array(node, limits.max_array_items)
    if kinds == {"integer"}:
        _bound_integer(node)
    if kinds == {"number"}:
        _bound_number(node)
    for key, value in node.items():
        if key in _NAMED_SCHEMAS and isinstance(value, dict):
            for schema in value.values():
                _walk(schema, limits, string_chars)
        elif key not in _VALUES:
            _walk(value, limits, string_chars)


def clamp_schema(
    schema: dict[str, Any], limits: GrammarLimits, *, max_string_chars: int | None = None
) -> dict[str, Any]:
    """A copy of ``schema`` no grammar-constrained model will choke on.

    Args:
        schema: A JSON schema (``$defs`` and ``$ref`` included, as pydantic writes them).
        limits: What the provider can compile.
        max_string_chars: A tighter cap on strings for this call (a short verdict).

    Returns:
        The schema with every free-form string and every array bounded.
    """
    clamped = copy.deepcopy(schema)
    string_chars = limits.max_string_chars
    if max_string_chars is not None:
        string_chars = min(string_chars, max_string_chars)
    _walk(clamped, limits, string_chars)
    return clamped
