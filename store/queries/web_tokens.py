"""Web channel tokens (create by hash, list, revoke, find the live one) and event ownership."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, delete, select
from sqlmodel.ext.asyncio.session import AsyncSession

from store.tables.columns import utcnow
from store.tables.web_tokens import WebEventRow, WebTokenRow


async def add_token(
    session: AsyncSession,
    *,
    token_id: str,
    name: str,
    token_hash: str,
    agents: list[str],
    tenant: str | None = None,
) -> WebTokenRow:
    """Store a new token by its hash, in ``tenant`` (by default its own); commits."""
    row = WebTokenRow(
        id=token_id,
        name=name,
        token_hash=token_hash,
        agents=agents,
        tenant=tenant or token_id,
        created_at=utcnow(),
    )
    session.add(row)
    await session.commit()
    return row


async def get_token(session: AsyncSession, *, token_id: str) -> WebTokenRow | None:
    """One token by its ID, revoked or not."""
    return await session.get(WebTokenRow, token_id)


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


async def claim_event(
    session: AsyncSession, *, event_id: str, agent: str, tenant: str, at: datetime, prune: datetime
) -> str:
    """Record that ``tenant`` posts ``event_id`` unless it is recorded already; commits.

    Rows older than ``prune`` are deleted in the same transaction (their markers are long
    gone), so the table holds about a day of events.

    Returns:
        The tenant that owns the event: ``tenant``, or whoever posted it first.
    """
    await session.exec(delete(WebEventRow).where(col(WebEventRow.created_at) < prune))
    await session.exec(
        insert(WebEventRow)
        .values(event_id=event_id, agent=agent, tenant=tenant, created_at=at)
        .on_conflict_do_nothing(index_elements=["event_id"])
    )
    owner = await session.get(WebEventRow, event_id)
    await session.commit()
    return tenant if owner is None else owner.tenant


async def event_owner(session: AsyncSession, *, event_id: str, agent: str) -> str | None:
    """The tenant that posted ``event_id`` to ``agent``, if the web channel recorded it."""
    row = await session.get(WebEventRow, event_id)
    return None if row is None or row.agent != agent else row.tenant
