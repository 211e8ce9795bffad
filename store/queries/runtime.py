"""Prompts, activation outcomes, completion markers and the outbox."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, LiteralString, NotRequired, TypedDict, Unpack

from sqlalchemy import text
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.events import CompletionMarker, Outcome
from schemas.models import ChatMessage
from store.lane import Lane
from store.sql import in_session, insert_once_on
from store.tables import MarkerRow, PromptRow
from store.tables.runtime import ActivationRow

OUTBOX_CHANNEL = "persyn_outbox"
"""LISTEN/NOTIFY channel announcing outbox rows (best-effort live presentation)."""


async def save_prompt(
    lane: Lane,
    *,
    prompt_id: str,
    activation_id: str | None,
    task: str,
    system: str,
    messages: list[ChatMessage],
    token_estimate: int,
    created_at: datetime,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Store an assembled prompt (idempotent: a retried assembly keeps the first).

    One statement on the driver lane: every message's prompt is written.
    """
    await insert_once_on(
        lane,
        PromptRow.__table__,  # type: ignore[attr-defined]
        {
            "id": prompt_id,
            "activation_id": activation_id,
            "task": task,
            "system": system,
            "messages": [m.model_dump() for m in messages],
            "extra": dict(extra or {}),
            "token_estimate": token_estimate,
            "created_at": created_at,
        },
        key=["id"],
    )


async def load_prompt(session: AsyncSession, *, prompt_id: str) -> PromptRow | None:
    """A stored prompt."""
    return await session.get(PromptRow, prompt_id)


async def prompt_extra(session: AsyncSession, *, prompt_id: str) -> dict[str, object] | None:
    """What a stored prompt's sources left beside it (``extra``), without its text."""
    row = (
        await session.exec(select(PromptRow.extra).where(PromptRow.id == prompt_id))
    ).one_or_none()
    return dict(row) if row is not None else None


_RECORD_OUTCOME: LiteralString = """
    WITH activation AS (
        INSERT INTO activations (id, agent, event_id, conversation_id, trigger, outcome, text,
                                 reason, degraded, completed_at)
        SELECT CAST(%(activation_id)s AS varchar), CAST(%(agent)s AS varchar),
               CAST(%(event_id)s AS varchar), CAST(%(conversation_id)s AS varchar),
               CAST(%(trigger)s AS varchar), CAST(%(outcome)s AS varchar), CAST(%(text)s AS text),
               CAST(%(reason)s AS varchar), CAST(%(degraded)s AS boolean),
               CAST(%(completed_at)s AS timestamptz)
         WHERE CAST(%(activation_id)s AS varchar) IS NOT NULL
        ON CONFLICT (id) DO NOTHING
    )
    INSERT INTO completion_markers (event_id, agent, activation_id, conversation_id, outcome,
                                    text, reason, degraded, completed_at, expires_at)
    VALUES (CAST(%(event_id)s AS varchar), CAST(%(agent)s AS varchar),
            CAST(%(activation_id)s AS varchar), CAST(%(conversation_id)s AS varchar),
            CAST(%(outcome)s AS varchar), CAST(%(text)s AS text), CAST(%(reason)s AS varchar),
            CAST(%(degraded)s AS boolean), CAST(%(completed_at)s AS timestamptz),
            CAST(%(expires_at)s AS timestamptz))
    ON CONFLICT (event_id) DO NOTHING
    """


def _outcome(agent: str, trigger: str, marker: CompletionMarker) -> dict[str, Any]:
    return {
        "activation_id": marker.activation_id,
        "agent": agent,
        "event_id": marker.event_id,
        "conversation_id": marker.conversation_id,
        "trigger": trigger,
        "outcome": marker.outcome.value,
        "text": marker.text,
        "reason": marker.reason,
        "degraded": marker.degraded,
        "completed_at": marker.completed_at,
        "expires_at": marker.expires_at,
    }


async def record_outcome(
    session: AsyncSession, *, agent: str, trigger: str, marker: CompletionMarker
) -> None:
    """Persist the activation's outcome and its completion marker in one statement (idempotent)."""
    await in_session(session)(_RECORD_OUTCOME, _outcome(agent, trigger, marker))
    await session.commit()


async def record_outcome_on(
    lane: Lane, *, agent: str, trigger: str, marker: CompletionMarker
) -> None:
    """:func:`record_outcome` on the driver lane: every reply's outcome is recorded."""
    await lane.rows(_RECORD_OUTCOME, _outcome(agent, trigger, marker))


async def get_marker(
    session: AsyncSession, *, event_id: str, now: datetime
) -> CompletionMarker | None:
    """The unexpired completion marker for ``event_id``."""
    row = (
        await session.exec(
            select(MarkerRow).where(MarkerRow.event_id == event_id, MarkerRow.expires_at > now)
        )
    ).first()
    if row is None:
        return None
    return CompletionMarker(
        event_id=row.event_id,
        activation_id=row.activation_id,
        conversation_id=row.conversation_id,
        outcome=Outcome(row.outcome),
        text=row.text,
        reason=row.reason,
        degraded=row.degraded,
        completed_at=row.completed_at,
        expires_at=row.expires_at,
    )


async def purge_expired_markers(session: AsyncSession, *, now: datetime) -> int:
    """Delete expired markers; returns how many went."""
    connection = await session.connection()
    result = await connection.execute(
        text("DELETE FROM completion_markers WHERE expires_at <= :now"), {"now": now}
    )
    await session.commit()
    return int(result.rowcount or 0)


_ADD_OUTBOX: LiteralString = """
    WITH queued AS (
        INSERT INTO outbox (id, activation_id, agent, channel_key, conversation_id, text,
                            unprompted, created_at, status, delivered_at, event_id)
        VALUES (CAST(%(id)s AS varchar), CAST(%(activation_id)s AS varchar),
                CAST(%(agent)s AS varchar),
                CAST(%(channel_key)s AS varchar), CAST(%(conversation_id)s AS varchar),
                CAST(%(text)s AS text), CAST(%(unprompted)s AS boolean),
                CAST(%(created_at)s AS timestamptz), CAST(%(status)s AS varchar),
                CAST(%(delivered_at)s AS timestamptz), CAST(%(event_id)s AS varchar))
        ON CONFLICT (activation_id) DO NOTHING
        RETURNING id
    )
    SELECT pg_notify(CAST(%(notify_channel)s AS text), CAST(%(payload)s AS text)) FROM queued
    """


class Outbox(TypedDict):
    """A transmitted message to queue once per activation; its ID is the reply turn's."""

    message_id: str
    activation_id: str
    agent: str
    channel_key: str
    conversation_id: str | None
    text_: str
    created_at: datetime
    unprompted: NotRequired[bool]
    delivered: NotRequired[bool]
    """It has reached its people already (a reply returned to a pull channel's waiting
    client), so it needs no delivery run (docs/channels.md)."""
    event_id: NotRequired[str | None]
    """The inbound event a reply answers."""


def _outbox(fields: Outbox) -> dict[str, Any]:
    delivered = fields.get("delivered", False)
    message_id, agent, channel_key = fields["message_id"], fields["agent"], fields["channel_key"]
    return {
        "id": message_id,
        "activation_id": fields["activation_id"],
        "agent": agent,
        "channel_key": channel_key,
        "conversation_id": fields["conversation_id"],
        "text": fields["text_"],
        "unprompted": fields.get("unprompted", False),
        "created_at": fields["created_at"],
        "status": "delivered" if delivered else "pending",
        "delivered_at": fields["created_at"] if delivered else None,
        "event_id": fields.get("event_id"),
        "notify_channel": OUTBOX_CHANNEL,
        "payload": json.dumps({"id": message_id, "agent": agent, "channel": channel_key}),
    }


async def add_outbox(session: AsyncSession, **fields: Unpack[Outbox]) -> bool:
    """Queue a transmitted message once per activation and announce it; ``False`` on a retry.

    Commits.
    """
    inserted = bool(await in_session(session)(_ADD_OUTBOX, _outbox(fields)))
    await session.commit()
    return inserted


async def add_outbox_on(lane: Lane, **fields: Unpack[Outbox]) -> bool:
    """:func:`add_outbox` on the driver lane, one statement: every reply is queued."""
    return bool(await lane.rows(_ADD_OUTBOX, _outbox(fields)))


async def activations_of_event(session: AsyncSession, *, event_id: str) -> list[str]:
    """The IDs of the activations that handled ``event_id`` (one, but for another agent's)."""
    rows = await session.exec(
        select(ActivationRow.id).where(ActivationRow.event_id == event_id).order_by("id")
    )
    return list(rows.all())
