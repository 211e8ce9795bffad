"""Pickup by an integrator's pull: acknowledge messages by ID, list those still kept.

A row kept for pickup (``awaiting_pickup``) is listed until it is acknowledged; acknowledging
marks it ``delivered`` once, so an acknowledged row is never listed again and a second
acknowledgement changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, func
from sqlmodel import col, select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.delivery import DeliveryStatus
from store.tables import OutboxRow
from store.tables.agents import Identity


@dataclass(frozen=True)
class KeptMessage:
    """A row kept for pickup, with the speaker IDs known on its channel."""

    row: OutboxRow
    recipients: list[str]


def _on(service: str, channel: str | None) -> ColumnElement[bool]:
    if channel is not None:
        return col(OutboxRow.channel_key) == f"{service}:{channel}"
    # autoescape: '_' and '-' in a service name are literal, not LIKE wildcards.
    return col(OutboxRow.channel_key).startswith(f"{service}:", autoescape=True)


async def acknowledge(
    session: AsyncSession, *, agent: str, service: str, message_ids: Sequence[str]
) -> int:
    """Mark the agent's kept messages on ``service`` delivered; others are left alone.

    A row still ``pending`` counts too: its delivery run then finds it delivered.

    Returns:
        How many changed now (a row acknowledged before is not counted again).
    """
    if not message_ids:
        return 0
    result = await session.exec(
        update(OutboxRow)
        .where(
            col(OutboxRow.id).in_(list(message_ids)),
            col(OutboxRow.agent) == agent,
            _on(service, None),
            col(OutboxRow.status).in_([DeliveryStatus.AWAITING_PICKUP, DeliveryStatus.PENDING]),
        )
        .values(status=DeliveryStatus.DELIVERED, delivered_at=func.now())
    )
    await session.commit()
    return int(result.rowcount or 0)


async def kept(
    session: AsyncSession, *, agent: str, service: str, channel: str | None, limit: int
) -> list[KeptMessage]:
    """The agent's messages kept for pickup on ``service`` (one channel of it), oldest first."""
    if limit == 0:
        return []
    rows = list(
        await session.exec(
            select(OutboxRow)
            .where(
                col(OutboxRow.agent) == agent,
                _on(service, channel),
                col(OutboxRow.status) == DeliveryStatus.AWAITING_PICKUP,
            )
            .order_by(col(OutboxRow.created_at), col(OutboxRow.id))
            .limit(limit)
        )
    )
    channels = {row.channel_key.partition(":")[2] for row in rows}
    speakers: dict[str, list[str]] = {}
    if channels:
        for identity in await session.exec(
            select(Identity)
            .where(
                col(Identity.agent) == agent,
                col(Identity.service) == service,
                col(Identity.channel).in_(channels),
            )
            .order_by(col(Identity.created_at))
        ):
            speakers.setdefault(identity.channel, []).append(identity.speaker_id)
    return [
        KeptMessage(row=row, recipients=speakers.get(row.channel_key.partition(":")[2], []))
        for row in rows
    ]
