"""Usage records for tests that do not need a model call."""

from __future__ import annotations

from datetime import UTC, datetime

from schemas.ids import new_ulid
from schemas.models import ModelTier, UsageRecord


def usage(**fields: object) -> UsageRecord:
    values: dict[str, object] = {
        "record_id": new_ulid(),
        "stage": "respond",
        "provider": "scripted",
        "model": "scripted",
        "tier": ModelTier.STRONG,
        "input_tokens": 100,
        "output_tokens": 20,
        "agent": "ada",
        "channel": "terminal:tty",
        "conversation": new_ulid(),
        "activation": new_ulid(),
        "occurred_at": datetime.now(UTC),
    }
    values.update(fields)
    return UsageRecord.model_validate(values)
