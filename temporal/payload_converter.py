"""The payload converter: pydantic JSON, with untyped payloads that do not decode handed over raw.

Why: Persyn's handlers take ``*payloads`` and validate them themselves (``workflows/handlers.py``),
so that bad input is refused with a message naming what to fix. But the SDK decodes a handler's
arguments before any handler code runs, and a payload that is not JSON at all (0 bytes, bytes
that do not parse, an encoding no Persyn process writes) failed there with a retryable
``RuntimeError("Failed decoding arguments")`` that named nothing. This converter returns such a
payload as a :class:`temporalio.common.RawValue` instead, so the handler sees it and refuses it.
An untyped payload in any encoding but JSON's (``binary/plain`` bytes, say) comes back raw too:
the handlers take JSON objects only.

Only values decoded *without* a type hint are tolerated: those are exactly the ``*payloads`` of
the handlers. Typed inputs and results (workflow and activity arguments, typed query results)
still fail loudly, as before.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.common import RawValue
from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import DataConverter

JSON_ENCODINGS = frozenset({b"json/plain", b"binary/null"})
"""The encodings of an untyped JSON value (``binary/null`` is how the SDKs send ``None``)."""


class TolerantPayloadConverter(PydanticPayloadConverter):
    """:class:`PydanticPayloadConverter` that returns an undecodable untyped payload as raw."""

    def from_payloads(
        self, payloads: Sequence[Payload], type_hints: list[type] | None = None
    ) -> list[Any]:
        """Decode ``payloads``; without type hints, one that does not decode comes back raw.

        Args:
            payloads: The payloads, already opened by the codec.
            type_hints: The types expected, if the receiver declared them.

        Returns:
            One value per payload: decoded JSON, or a ``RawValue`` for a payload that is not.
        """
        if type_hints:
            return super().from_payloads(payloads, type_hints)
        values: list[Any] = []
        for payload in payloads:
            if payload.metadata.get("encoding") not in JSON_ENCODINGS:
                # Bytes, protobuf, or an encoding no one knows: not a JSON value to validate.
                values.append(RawValue(payload))
                continue
            try:
                values.extend(super().from_payloads([payload]))
            except Exception:
                values.append(_lenient(payload))
        return values


def _lenient(payload: Payload) -> Any:
    """A JSON value pydantic's strict parser refused, read by the standard library, or raw.

    JSON may escape a lone surrogate (backslash, u, D800) and pydantic refuses the whole document
    for it; the standard library reads it, so the handler can refuse the one field that holds
    it, by name (and ``deliver`` can record a marker for the event's ID). Empty bytes, bytes
    that are not JSON, or nesting past the interpreter's limit stay raw: the receiver refuses
    them as a whole.
    """
    try:
        return json.loads(payload.data)
    except (ValueError, RecursionError):
        return RawValue(payload)


tolerant_data_converter = DataConverter(payload_converter_class=TolerantPayloadConverter)
"""Persyn's data converter without the payload codec."""
