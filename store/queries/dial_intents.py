"""Dial intents: written before the transport dials, settled with its answer (``place_call``).

Each function commits, so what it wrote survives the worker crashing right after it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col
from sqlmodel.ext.asyncio.session import AsyncSession

from store.tables.voice import DialIntentRow, DialStatus


async def open_intent(
    session: AsyncSession, *, key: str, agent: str, person_id: str, number: str, at: datetime
) -> tuple[DialIntentRow, bool]:
    """The intent keyed ``key``, and whether this call wrote it (``False``: a retry found it).

    A new intent is ``dialing``. Commits.
    """
    result = await session.exec(
        insert(DialIntentRow)
        .values(
            id=key,
            agent=agent,
            person_id=person_id,
            number=number,
            status=DialStatus.DIALING.value,
            created_at=at,
        )
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(DialIntentRow.__table__.c.id)  # type: ignore[attr-defined]
    )
    fresh = result.scalar_one_or_none() is not None
    await session.commit()
    row = await session.get(DialIntentRow, key, populate_existing=True)
    if row is None:  # written or found just above, and nothing deletes an intent but its agent
        raise LookupError(f"dial intent {key} vanished")
    return row, fresh


async def record_placed(
    session: AsyncSession, *, key: str, call_id: str, call_status: str, at: datetime
) -> None:
    """The transport placed intent ``key``'s call as ``call_id``. Commits."""
    await session.exec(
        update(DialIntentRow)
        .where(col(DialIntentRow.id) == key)
        .values(
            status=DialStatus.PLACED.value,
            call_id=call_id,
            call_status=call_status,
            error=None,
            settled_at=at,
        )
    )
    await session.commit()


async def record_failed(session: AsyncSession, *, key: str, error: str, at: datetime) -> None:
    """Intent ``key`` placed no call, for the reason ``error`` (one line). Commits."""
    await session.exec(
        update(DialIntentRow)
        .where(col(DialIntentRow.id) == key)
        .values(status=DialStatus.FAILED.value, error=error, settled_at=at)
    )
    await session.commit()
