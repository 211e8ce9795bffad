"""Every time on the wire carries its time zone: a naive one is refused where it enters.

A naive timestamp that got past validation once made the agent's next workflow task compare
naive against aware on every retry, and stalled it for good (issue 12).
"""

from __future__ import annotations

import datetime as dt
import typing
from typing import Annotated, Any

import pytest
from pydantic import AwareDatetime, BaseModel, TypeAdapter, ValidationError

from contract.catalog import wire_models
from schemas.activation import ActivationFinished
from schemas.events import CompletionMarker, InboundEvent
from schemas.ids import new_ulid


def datetime_fields(model: type[BaseModel]) -> dict[str, TypeAdapter[Any]]:
    """A validator for every field of ``model`` whose type mentions a datetime."""
    found = {}
    for name, field in model.model_fields.items():
        flat = typing.get_args(field.annotation) or (field.annotation,)
        inner = [a for arg in flat for a in (typing.get_args(arg) or (arg,))]
        if any(a is dt.datetime or a is AwareDatetime for a in inner):
            annotation: Any = field.annotation
            if field.metadata:
                annotation = Annotated[(annotation, *field.metadata)]
            found[name] = TypeAdapter(annotation)
    return found


def test_every_wire_datetime_is_aware_once_validated() -> None:
    naive = dt.datetime(2026, 5, 1, 9, 30)
    checked, stays_naive = 0, []
    for model_name, model in wire_models().items():
        for field, adapter in datetime_fields(model).items():
            checked += 1
            try:
                value = adapter.validate_python(naive)
            except ValidationError:
                continue  # refused: the client must say which zone
            if value.tzinfo is None:
                stays_naive.append(f"{model_name}.{field}")
    assert checked > 40
    assert stays_naive == []


def test_a_naive_completion_time_is_refused_naming_the_field() -> None:
    now = dt.datetime(2026, 5, 1, 9, 30)
    with pytest.raises(ValidationError) as caught:
        ActivationFinished.model_validate(
            {
                "marker": {
                    "event_id": new_ulid(),
                    "outcome": "spoke",
                    "completed_at": now.isoformat(),
                    "expires_at": now.isoformat(),
                }
            }
        )
    assert {e["loc"] for e in caught.value.errors()} == {
        ("marker", "completed_at"),
        ("marker", "expires_at"),
    }
    aware = now.replace(tzinfo=dt.UTC)
    assert (
        CompletionMarker(
            event_id=new_ulid(), outcome="spoke", completed_at=aware, expires_at=aware
        ).completed_at.tzinfo
        is not None
    )


def test_a_naive_sent_at_is_refused() -> None:
    with pytest.raises(ValidationError, match="timezone"):
        InboundEvent.model_validate(
            {
                "event_id": new_ulid(),
                "channel": {"service": "web", "channel": "x"},
                "speaker": {"speaker_id": "u"},
                "text": "hi",
                "sent_at": "2026-05-01T09:30:00",
            }
        )
