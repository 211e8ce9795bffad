"""A small JSON Schema (draft 2020-12) checker for the keywords pydantic emits.

The project has no JSON Schema library; this one is strict in the direction that matters for a
published contract: a keyword it does not know is an error, not something silently ignored,
and every ``$ref`` must resolve inside the same document. Where the ``jsonschema`` package is
installed the tests also check against the official metaschema.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

ANNOTATIONS = {
    "$schema",
    "$defs",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    # pydantic marks tagged unions with the OpenAPI keyword; ``oneOf`` does the validating.
    "discriminator",
}
ASSERTIONS = {
    "$ref",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "items",
    "prefixItems",
    "anyOf",
    "allOf",
    "oneOf",
    "enum",
    "const",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
    "not",
    "format",
}
TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}


class SchemaError(ValueError):
    """The schema itself is malformed or uses a keyword this checker does not know."""


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    prefix = "#/$defs/"
    if not ref.startswith(prefix) or ref[len(prefix) :] not in root.get("$defs", {}):
        raise SchemaError(f"unresolvable $ref {ref!r}")
    resolved: dict[str, Any] = root["$defs"][ref[len(prefix) :]]
    return resolved


def check_schema(schema: Any, root: dict[str, Any] | None = None, at: str = "#") -> None:
    """Raise :class:`SchemaError` unless ``schema`` uses only known keywords and local refs."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"{at}: a schema must be an object or a boolean")
    root = root if root is not None else schema
    unknown = set(schema) - ANNOTATIONS - ASSERTIONS
    if unknown:
        raise SchemaError(f"{at}: unknown keywords {sorted(unknown)}")
    if "$ref" in schema:
        _resolve(root, schema["$ref"])
    for name, sub in schema.get("$defs", {}).items():
        check_schema(sub, root, f"{at}/$defs/{name}")
    for keyword in ("properties", "patternProperties"):
        for name, sub in schema.get(keyword, {}).items():
            check_schema(sub, root, f"{at}/{keyword}/{name}")
    for pattern in schema.get("patternProperties", {}):
        re.compile(pattern)
    for keyword in ("anyOf", "allOf", "oneOf", "prefixItems"):
        for index, sub in enumerate(schema.get(keyword, [])):
            check_schema(sub, root, f"{at}/{keyword}/{index}")
    for keyword in ("items", "additionalProperties", "propertyNames", "not"):
        if keyword in schema:
            check_schema(schema[keyword], root, f"{at}/{keyword}")
    types = schema.get("type", [])
    for name in [types] if isinstance(types, str) else types:
        if name not in TYPES:
            raise SchemaError(f"{at}: unknown type {name!r}")
    if "pattern" in schema:
        re.compile(schema["pattern"])


def _is_type(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in {"integer", "number"}:
        return False
    return isinstance(value, TYPES[name])


def errors(
    instance: Any, schema: Any, root: dict[str, Any] | None = None, at: str = ""
) -> list[str]:
    """Every way ``instance`` fails ``schema``, as ``"<path>: <reason>"`` lines."""
    if schema is True:
        return []
    if schema is False:
        return [f"{at or '/'}: not allowed"]
    root = root if root is not None else schema
    where = at or "/"
    found: list[str] = []
    if "$ref" in schema:
        found += errors(instance, _resolve(root, schema["$ref"]), root, at)
    if "type" in schema:
        names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        if not any(_is_type(instance, name) for name in names):
            return [*found, f"{where}: {instance!r} is not of type {schema['type']}"]
    if "enum" in schema and instance not in schema["enum"]:
        found.append(f"{where}: {instance!r} is not one of {schema['enum']}")
    if "const" in schema and instance != schema["const"]:
        found.append(f"{where}: {instance!r} is not {schema['const']!r}")
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            passing = [sub for sub in schema[keyword] if not errors(instance, sub, root, at)]
            if not passing or (keyword == "oneOf" and len(passing) > 1):
                found.append(f"{where}: {instance!r} does not match {keyword}")
    for sub in schema.get("allOf", []):
        found += errors(instance, sub, root, at)
    if "not" in schema and not errors(instance, schema["not"], root, at):
        found.append(f"{where}: {instance!r} matches a schema it must not")
    if isinstance(instance, str):
        found += _string_errors(instance, schema, where)
    if isinstance(instance, (int, float)) and not isinstance(instance, bool):
        found += _number_errors(instance, schema, where)
    if isinstance(instance, list):
        found += _array_errors(instance, schema, root, at)
    if isinstance(instance, dict):
        found += _object_errors(instance, schema, root, at)
    return found


def _string_errors(value: str, schema: dict[str, Any], where: str) -> list[str]:
    found = []
    if "pattern" in schema and not re.search(schema["pattern"], value):
        found.append(f"{where}: {value!r} does not match {schema['pattern']!r}")
    if len(value) < schema.get("minLength", 0):
        found.append(f"{where}: {value!r} is shorter than {schema['minLength']}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        found.append(f"{where}: longer than {schema['maxLength']}")
    if schema.get("format") == "date-time":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            found.append(f"{where}: {value!r} is not a date-time")
    return found


def _number_errors(value: float, schema: dict[str, Any], where: str) -> list[str]:
    checks: dict[str, Callable[[float, float], bool]] = {
        "minimum": operator.ge,
        "maximum": operator.le,
        "exclusiveMinimum": operator.gt,
        "exclusiveMaximum": operator.lt,
        "multipleOf": lambda number, step: (number / step).is_integer(),
    }
    return [
        f"{where}: {value!r} fails {keyword} {schema[keyword]}"
        for keyword, holds in checks.items()
        if keyword in schema and not holds(value, schema[keyword])
    ]


def _array_errors(
    value: list[Any], schema: dict[str, Any], root: dict[str, Any], at: str
) -> list[str]:
    found = []
    prefix = schema.get("prefixItems", [])
    for index, item in enumerate(value):
        sub = prefix[index] if index < len(prefix) else schema.get("items", True)
        found += errors(item, sub, root, f"{at}/{index}")
    if len(value) < schema.get("minItems", 0):
        found.append(f"{at or '/'}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        found.append(f"{at or '/'}: more than {schema['maxItems']} items")
    return found


def _object_errors(
    value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], at: str
) -> list[str]:
    found = [
        f"{at or '/'}: {name!r} is required"
        for name in schema.get("required", [])
        if name not in value
    ]
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    for name, item in value.items():
        if "propertyNames" in schema:
            found += errors(name, schema["propertyNames"], root, f"{at}/{name} (name)")
        matched = [sub for pattern, sub in patterns.items() if re.search(pattern, name)]
        for sub in matched:
            found += errors(item, sub, root, f"{at}/{name}")
        if name in properties:
            found += errors(item, properties[name], root, f"{at}/{name}")
        elif matched:
            continue
        elif "additionalProperties" in schema:
            if schema["additionalProperties"] is False:
                found.append(f"{at}/{name}: additional property not allowed")
            else:
                found += errors(item, schema["additionalProperties"], root, f"{at}/{name}")
    if len(value) < schema.get("minProperties", 0):
        found.append(f"{at or '/'}: fewer than {schema['minProperties']} properties")
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        found.append(f"{at or '/'}: more than {schema['maxProperties']} properties")
    return found
