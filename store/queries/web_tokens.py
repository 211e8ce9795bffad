"""Web channel tokens: create (hash only), list, revoke, and find the live token for a hash."""

from __future__ import annotations

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from store.tables.columns import utcnow
from store.tables.web_tokens import WebTokenRow


async def add_token(
    session: AsyncSession, *, token_id: str, name: str, token_hash: str, agents: list[str]
) -> WebTokenRow:
    """Store a new token by its hash; commits."""
    row = WebTokenRow(
        id=token_id, name=name, token_hash=token_hash, agents=agents, created_at=utcnow()
    )
    session.add(row)
    await session.commit()
    return row


async def list_tokens(session: AsyncSession) -> list[WebTokenRow]:
    """Every token, revoked ones included, oldest first."""
    rows = await session.exec(select(WebTokenRow).order_by(col(WebTokenRow.id)))
    return list(rows.all())


async def live_token(session: AsyncSession, *, token_hash: str) -> WebTokenRow | None:
    """The unrevoked token with this hash, if any."""
    rows = await session.exec(
        select(WebTokenRow).where(
            WebTokenRow.token_hash == token_hash, col(WebTokenRow.revoked_at).is_(None)
        )
    )
    return rows.first()


async def revoke_token(session: AsyncSession, *, token_id: str) -> WebTokenRow | None:
    """Revoke a token (idempotent); commits. ``None`` if there is no such token."""
    row = await session.get(WebTokenRow, token_id)
    if row is None:
        return None
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.add(row)
        await session.commit()
    return row
