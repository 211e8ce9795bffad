"""An operator's override of a memory's sensitivity, audited like a withdrawal.

The record's ``sensitivity`` column is what recall's fences read, so the change applies to the
next prompt; the audit entry keeps who, when, the change (``from -> to``) and why, with a
snapshot of the record's metadata as it was before.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.memory import Sensitivity
from schemas.memory_formation import MemoryAction, SensitivityChange
from store.queries.memory import COLUMNS, dissolve_above, to_public, write_audit
from store.sql import execute


class ForgottenRecordError(Exception):
    """The record was forgotten: it is out of recall whatever its sensitivity."""


async def set_sensitivity(
    session: AsyncSession,
    *,
    record_id: str,
    sensitivity: Sensitivity,
    actor: str,
    reason: str,
    now: datetime,
) -> SensitivityChange | None:
    """Set ``record_id``'s sensitivity and audit the change; ``None`` if there is no record.

    Setting the sensitivity it already has changes nothing and writes no entry.

    Raises:
        ForgottenRecordError: The record was forgotten.
    """
    row = (
        await execute(
            session,
            f"SELECT {COLUMNS}, m.derived_from FROM memory_records m WHERE m.id = :id FOR UPDATE",
            {"id": record_id},
        )
    ).first()
    if row is None:
        return None
    before = to_public(row)
    if before.forgotten_at is not None:
        await session.rollback()
        raise ForgottenRecordError(record_id)
    if before.sensitivity is sensitivity:
        await session.rollback()
        return SensitivityChange(record=before, before=before.sensitivity)
    entry = await write_audit(
        session,
        row=row,
        action=MemoryAction.SENSITIVITY,
        actor=actor,
        reason=f"{before.sensitivity.value} -> {sensitivity.value}: {reason}",
        derived=[],
        now=now,
    )
    await execute(
        session,
        "UPDATE memory_records SET sensitivity = :s WHERE id = :id",
        {"s": sensitivity.value, "id": record_id},
    )
    # A recollection folded from it was written for its old audience.
    await dissolve_above(
        session, record_id=record_id, actor=actor, reason="its audience changed", now=now
    )
    await session.commit()
    after = before.model_copy(update={"sensitivity": sensitivity})
    return SensitivityChange(record=after, before=before.sensitivity, audit=entry)
