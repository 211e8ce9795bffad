"""Outbound delivery state of outbox rows, pickup by pull channels, and channel pacing.

Only the delivery workflow's activities move a row out of ``pending``; pull channels' clients
move ``awaiting_pickup`` to ``delivered`` once they have shown the message.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, text
from sqlmodel import col, select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.delivery import BUDGET_EXHAUSTED, DeliveryStatus, PacingSettings
from schemas.text import estimate_tokens
from store.lane import Lane
from store.tables import OutboxRow, UsageRow
from store.tables.delivery import EVERY_CHANNEL, PacingOverrideRow

_SETTLED = (DeliveryStatus.DELIVERED, DeliveryStatus.FAILED, DeliveryStatus.BLOCKED)


async def get_message(session: AsyncSession, *, message_id: str) -> OutboxRow | None:
    """One outbox row."""
    return await session.get(OutboxRow, message_id)


async def record_attempt(
    session: AsyncSession, *, message_id: str, attempts: int, error: str
) -> None:
    """Note a failed attempt on a pending row."""
    await session.exec(
        update(OutboxRow)
        .where(col(OutboxRow.id) == message_id, col(OutboxRow.status) == DeliveryStatus.PENDING)
        .values(attempts=attempts, last_error=error[:2000])
    )
    await session.commit()


async def record_delivered(
    session: AsyncSession,
    *,
    message_id: str,
    status: DeliveryStatus,
    attempts: int,
    external_id: str | None,
    at: datetime,
) -> None:
    """Record a successful attempt (delivered, or kept for pickup) on a pending row."""
    await session.exec(
        update(OutboxRow)
        .where(col(OutboxRow.id) == message_id, col(OutboxRow.status) == DeliveryStatus.PENDING)
        .values(
            status=status,
            attempts=attempts,
            external_id=external_id,
            delivered_at=at if status is DeliveryStatus.DELIVERED else None,
            last_error=None,
        )
    )
    await session.commit()


async def settle(
    session: AsyncSession, *, message_id: str, status: DeliveryStatus, reason: str
) -> DeliveryStatus | None:
    """Record a delivery that ended without success; a settled row keeps its state.

    Returns:
        The row's status afterwards (``None``: no such row).
    """
    row = await session.get(OutboxRow, message_id, with_for_update=True, populate_existing=True)
    if row is None:
        await session.commit()
        return None
    if row.status == DeliveryStatus.PENDING:
        # A timeout says only that time ran out: keep what the last attempt ran into.
        last = row.last_error
        row.status = status
        row.last_error = (reason if not last or last in reason else f"{reason}; last: {last}")[
            :2000
        ]
        session.add(row)
    settled = DeliveryStatus(row.status)
    await session.commit()
    return settled


async def mark_picked_up(session: AsyncSession, *, message_ids: Sequence[str]) -> int:
    """Messages a pull channel's client has shown become delivered.

    Call it only for messages of pull channels (terminal, web). A message still pending counts
    too: a console can show a message (live, from its NOTIFY) before its delivery run has
    recorded it kept; the run then finds it delivered and leaves it so.

    Returns:
        How many changed (a message already delivered, failed or blocked is left alone).
    """
    if not message_ids:
        return 0
    result = await session.exec(
        update(OutboxRow)
        .where(
            col(OutboxRow.id).in_(list(message_ids)),
            col(OutboxRow.status).in_([DeliveryStatus.AWAITING_PICKUP, DeliveryStatus.PENDING]),
        )
        .values(status=DeliveryStatus.DELIVERED, delivered_at=func.now())
    )
    await session.commit()
    return int(result.rowcount or 0)


async def kept_for_pickup(
    session: AsyncSession, *, agent: str, channel_key: str, limit: int = 100
) -> list[OutboxRow]:
    """Messages kept on a pull channel until someone connects, oldest first."""
    rows = await session.exec(
        select(OutboxRow)
        .where(
            OutboxRow.agent == agent,
            OutboxRow.channel_key == channel_key,
            col(OutboxRow.status) == DeliveryStatus.AWAITING_PICKUP,
        )
        .order_by(col(OutboxRow.created_at))
        .limit(limit)
    )
    return list(rows)


async def pending_messages(
    session: AsyncSession, *, older_than: datetime, limit: int = 500
) -> list[OutboxRow]:
    """Rows pending since before ``older_than`` (their delivery run may never have started)."""
    rows = await session.exec(
        select(OutboxRow)
        .where(
            col(OutboxRow.status) == DeliveryStatus.PENDING,
            col(OutboxRow.created_at) < older_than,
        )
        .order_by(col(OutboxRow.created_at))
        .limit(limit)
    )
    return list(rows)


async def channel_messages(
    session: AsyncSession, *, agent: str, channel_key: str, limit: int = 200
) -> list[OutboxRow]:
    """The agent's messages on one channel, oldest first (the newest ``limit``)."""
    rows = await session.exec(
        select(OutboxRow)
        .where(OutboxRow.agent == agent, OutboxRow.channel_key == channel_key)
        .order_by(col(OutboxRow.created_at).desc())
        .limit(limit)
    )
    return list(rows)[::-1]


# -- pacing ----------------------------------------------------------------------------------


async def pacing_for(
    session: AsyncSession, *, agent: str, channel_key: str, defaults: PacingSettings
) -> PacingSettings:
    """The defaults, overridden by the agent's own for every channel, then for this one."""
    rows = await session.exec(
        select(PacingOverrideRow).where(
            PacingOverrideRow.agent == agent,
            col(PacingOverrideRow.channel_key).in_([EVERY_CHANNEL, channel_key]),
        )
    )
    return _merged(defaults, {row.channel_key: row.settings for row in rows}, channel_key)


_OVERRIDES = (
    "SELECT channel_key, settings FROM pacing_overrides "
    "WHERE agent = %(agent)s AND channel_key = ANY(%(keys)s::varchar[])"
)


async def pacing_on(
    lane: Lane, *, agent: str, channel_key: str, defaults: PacingSettings
) -> PacingSettings:
    """:func:`pacing_for` on the driver lane, for the check before every reply."""
    rows = await lane.rows(_OVERRIDES, {"agent": agent, "keys": [EVERY_CHANNEL, channel_key]})
    return _merged(defaults, {row["channel_key"]: row["settings"] for row in rows}, channel_key)


def _merged(
    defaults: PacingSettings, overrides: dict[str, dict[str, Any]], channel_key: str
) -> PacingSettings:
    merged: dict[str, Any] = defaults.model_dump()
    merged.update(overrides.get(EVERY_CHANNEL, {}))
    merged.update(overrides.get(channel_key, {}))
    return PacingSettings.model_validate(merged)


async def set_pacing(
    session: AsyncSession,
    *,
    agent: str,
    channel_key: str,
    values: dict[str, Any],
    at: datetime,
) -> None:
    """Store an agent's pacing overrides for one channel (or ``*``), merged into earlier ones.

    Raises:
        pydantic.ValidationError: A value the pacing settings do not accept.
    """
    checked = PacingSettings.model_validate({**PacingSettings().model_dump(), **values})
    values = {
        name: value for name, value in checked.model_dump(mode="json").items() if name in values
    }
    row = await session.get(PacingOverrideRow, (agent, channel_key))
    if row is None:
        session.add(
            PacingOverrideRow(agent=agent, channel_key=channel_key, settings=values, updated_at=at)
        )
    else:
        row.settings = {**row.settings, **values}
        row.updated_at = at
        session.add(row)
    await session.commit()


@dataclass(frozen=True)
class Pace:
    """What pacing decided for one message."""

    blocked: str | None
    """Why the message is blocked, or ``None`` when it may go out."""
    wait_seconds: float


def _acceleration(times: list[datetime]) -> int:
    """How many steps in a row the gaps between messages shrank (newest last)."""
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    steps = 0
    for older, newer in reversed(list(itertools.pairwise(gaps))):
        if newer >= older:
            break
        steps += 1
    return steps


async def model_tokens_spent(
    session: AsyncSession,
    *,
    agent: str,
    channel_key: str,
    since: datetime,
    excluding_activation: str | None = None,
) -> int:
    """Model tokens (input and output of every call) the agent spent on a channel since ``since``.

    Read from the usage ledger, where every model call is attributed to the channel of the run
    that made it: replies, decisions, deliberation and emotion alike. ``excluding_activation``
    leaves out one activation's own calls (its reply was afforded before it was generated).
    """
    query = select(
        func.coalesce(func.sum(UsageRow.input_tokens + UsageRow.output_tokens), 0)
    ).where(
        UsageRow.agent == agent,
        UsageRow.channel == channel_key,
        col(UsageRow.occurred_at) > since,
    )
    if excluding_activation is not None:
        query = query.where(
            or_(
                col(UsageRow.activation).is_(None), col(UsageRow.activation) != excluding_activation
            )
        )
    return int((await session.exec(query)).one())


def budget_refusal(*, spent: int, settings: PacingSettings, channel_key: str) -> str | None:
    """Why nothing more may be spent on the channel, or ``None`` while the budget lasts."""
    if spent < settings.budget_tokens:
        return None
    return (
        f"{BUDGET_EXHAUSTED}: {spent} of {settings.budget_tokens} model tokens spent on "
        f"{channel_key} in the last {settings.window_seconds:g} s"
    )


async def budget_withheld(
    session: AsyncSession,
    *,
    agent: str,
    channel_key: str,
    settings: PacingSettings,
    now: datetime,
    excluding_activation: str | None = None,
) -> str | None:
    """Why the agent may spend no more on the channel (its budget is spent), or ``None``."""
    spent = await model_tokens_spent(
        session,
        agent=agent,
        channel_key=channel_key,
        since=now - timedelta(seconds=settings.window_seconds),
        excluding_activation=excluding_activation,
    )
    return budget_refusal(spent=spent, settings=settings, channel_key=channel_key)


async def pace(
    session: AsyncSession, *, message_id: str, settings: PacingSettings, now: datetime
) -> Pace:
    """Let a message through its channel's pacing, or block it; decided once per row.

    The budget counts the model tokens the row's agent spent on the channel in the rolling
    window, from the usage ledger (durable: no restart refills it), without the calls of the
    activation that wrote the row: a reply was afforded before it was generated
    (``budget_withheld``, asked by the activation), so it is not refused for its own cost. A
    message the agent sends on its own (an opening, ``message_contact``) is refused once the
    budget is spent. Concurrent messages on one channel are decided one at a time (a
    transaction-scoped advisory lock), so two cannot both pass the turn limit. A row already
    decided answers the same (a retried activity).
    """
    row = await session.get(OutboxRow, message_id, with_for_update=True)
    if row is None:
        raise LookupError(f"no outbox message {message_id}")
    connection = await session.connection()
    await connection.execute(
        text("SELECT pg_advisory_xact_lock(hashtext(:key))"),
        {"key": f"pace:{row.agent}:{row.channel_key}"},
    )
    if row.status == DeliveryStatus.BLOCKED:
        await session.commit()
        return Pace(blocked=row.last_error or "blocked", wait_seconds=0.0)
    if row.tokens is not None:
        wait = max(0.0, ((row.paced_until or now) - now).total_seconds())
        await session.commit()
        return Pace(blocked=None, wait_seconds=wait)
    earlier = list(
        await session.exec(
            select(OutboxRow)
            .where(
                OutboxRow.agent == row.agent,
                OutboxRow.channel_key == row.channel_key,
                col(OutboxRow.tokens).is_not(None),
                col(OutboxRow.paced_until) > now - timedelta(seconds=settings.window_seconds),
                col(OutboxRow.id) != row.id,
            )
            .order_by(col(OutboxRow.paced_until))
        )
    )
    reason = None
    if settings.max_messages is not None and len(earlier) + 1 > settings.max_messages:
        reason = (
            f"turn limit: {len(earlier)} messages on {row.channel_key} in the last "
            f"{settings.window_seconds:g} s (at most {settings.max_messages})"
        )
    else:
        reason = await budget_withheld(
            session,
            agent=row.agent,
            channel_key=row.channel_key,
            settings=settings,
            now=now,
            excluding_activation=row.activation_id,
        )
    if reason is not None:
        row.status = DeliveryStatus.BLOCKED
        row.last_error = reason
        session.add(row)
        await session.commit()
        return Pace(blocked=reason, wait_seconds=0.0)
    times = [r.created_at for r in earlier[-3:]] + [row.created_at]
    factor = settings.acceleration_factor ** _acceleration(times)
    earliest = now + timedelta(seconds=settings.listen_seconds)
    if earlier:
        last = earlier[-1].paced_until or now
        earliest = max(earliest, last + timedelta(seconds=settings.min_interval_seconds * factor))
    wait = min(settings.max_wait_seconds, max(0.0, (earliest - now).total_seconds()))
    row.tokens = estimate_tokens(row.text)
    row.paced_until = now + timedelta(seconds=wait)
    session.add(row)
    await session.commit()
    return Pace(blocked=None, wait_seconds=wait)


def is_settled(status: str) -> bool:
    """Whether a row's delivery has ended (an awaiting row still waits for its people)."""
    return status in {s.value for s in _SETTLED}


async def reply_to(session: AsyncSession, *, activation_id: str) -> OutboxRow | None:
    """The outbox row an activation transmitted, if it spoke."""
    rows = await session.exec(select(OutboxRow).where(OutboxRow.activation_id == activation_id))
    return rows.first()


async def inbox_messages(
    session: AsyncSession,
    *,
    agent: str,
    since: datetime | None = None,
    channel_key: str | None = None,
    failed_only: bool = False,
    limit: int = 50,
) -> list[OutboxRow]:
    """What ``persyn inbox`` lists, oldest first (the newest ``limit``).

    Unprompted messages, and every message whose delivery failed or was blocked (a reply
    that never reached its channel must be seen too); with ``failed_only``, only those.
    """
    undelivered = col(OutboxRow.status).in_([DeliveryStatus.FAILED, DeliveryStatus.BLOCKED])
    query = select(OutboxRow).where(
        OutboxRow.agent == agent,
        undelivered if failed_only else or_(col(OutboxRow.unprompted).is_(True), undelivered),
    )
    if since is not None:
        query = query.where(OutboxRow.created_at > since)
    if channel_key is not None:
        query = query.where(OutboxRow.channel_key == channel_key)
    rows = list(await session.exec(query.order_by(col(OutboxRow.created_at).desc()).limit(limit)))
    return rows[::-1]
