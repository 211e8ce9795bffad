"""Forgetting a memory everywhere Persyn keeps it: the database and the span file.

``store.queries.memory.forget`` withdraws the record and erases its text from every table in
one transaction; the span file, outside the database, is redacted after that commits.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

from observability.span_redaction import redact_span_file, replace_texts
from schemas.memory_formation import ForgetResult
from store.db import Database
from store.queries import memory as records
from store.queries.erasure import memory_text


async def forget_memory(
    db: Database,
    *,
    record_id: str,
    actor: str,
    reason: str | None,
    now: datetime,
    span_file: Path | None,
) -> ForgetResult | None:
    """Withdraw ``record_id`` and erase its text; ``None`` if there is no such record.

    Args:
        db: The database.
        record_id: The memory's ID.
        actor: Who asks, for the audit entry.
        reason: Why, for the audit entry.
        now: When.
        span_file: The file exporter's span file, redacted too (``None``: no file).
    """
    async with db.session() as session:
        text = await memory_text(session, record_id=record_id)
        result = await records.forget(
            session, record_id=record_id, actor=actor, reason=reason, now=now
        )
    if result is not None and text:
        await asyncio.to_thread(redact_span_file, span_file, replace_texts([text]))
    return result
