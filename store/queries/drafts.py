"""Reply drafts: the candidate reply stored once and read by ID (history carries the ID)."""

from __future__ import annotations

from datetime import datetime

from sqlmodel.ext.asyncio.session import AsyncSession

from store.sql import execute


async def save_draft(
    session: AsyncSession,
    *,
    draft_id: str,
    agent: str,
    activation_id: str | None,
    text: str,
    created_at: datetime,
) -> None:
    """Store a draft (idempotent: a retried activity keeps the first) and commit."""
    await execute(
        session,
        "INSERT INTO drafts (id, agent, activation_id, text, created_at) "
        "VALUES (:id, :agent, :activation, :text, :at) ON CONFLICT (id) DO NOTHING",
        {
            "id": draft_id,
            "agent": agent,
            "activation": activation_id,
            "text": text,
            "at": created_at,
        },
    )
    await session.commit()


async def draft_text(session: AsyncSession, *, draft_id: str) -> str | None:
    """A stored draft's text, or ``None`` if there is none (never stored, or dropped)."""
    result = await execute(session, "SELECT text FROM drafts WHERE id = :id", {"id": draft_id})
    value = result.scalar_one_or_none()
    return None if value is None else str(value)
