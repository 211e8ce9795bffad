"""Reply drafts: the candidate reply stored once and read by ID (history carries the ID).

Both run on the driver lane: a reply's draft is written and read back on every message.
"""

from __future__ import annotations

from datetime import datetime

from store.lane import Lane


async def save_draft(
    lane: Lane,
    *,
    draft_id: str,
    agent: str,
    activation_id: str | None,
    text: str,
    created_at: datetime,
) -> None:
    """Store a draft (idempotent: a retried activity keeps the first)."""
    await lane.rows(
        "INSERT INTO drafts (id, agent, activation_id, text, created_at) "
        "VALUES (%(id)s, %(agent)s, %(activation)s, %(text)s, %(at)s) ON CONFLICT (id) DO NOTHING",
        {
            "id": draft_id,
            "agent": agent,
            "activation": activation_id,
            "text": text,
            "at": created_at,
        },
    )


async def draft_text(lane: Lane, *, draft_id: str) -> str | None:
    """A stored draft's text, or ``None`` if there is none (never stored, or dropped)."""
    row = await lane.first("SELECT text FROM drafts WHERE id = %(id)s", {"id": draft_id})
    return None if row is None else str(row["text"])
