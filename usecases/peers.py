"""Conversations between two agents, for operators and tests (``persyn converse``).

The opening is an unprompted message of the first agent on ``agent:<second>``, delivered like
any other outbox row; from there each agent answers the other through its ordinary pipeline,
and each reply is delivered (paced) to the other. Nothing here drives the exchange: following
it only reads the outbox and the completion markers, so a follower can come and go, and the
conversation stops on its own: by silence (a reply that adds nothing is not sent), by the
channel's token budget or turn limit, or by a failure.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from typing import TypeVar

from temporalio.client import Client

from activities.channels.starting import start_delivery
from schemas.delivery import BUDGET_EXHAUSTED, DeliveryStatus
from schemas.events import CompletionMarker, Outcome
from schemas.ids import new_ulid
from schemas.peers import agent_channel, peer_event_id
from schemas.settings import Settings
from schemas.text import clean_text
from store.db import Database
from store.queries.agents import get_agent
from store.queries.contacts import send_unprompted
from store.queries.delivery import get_message, reply_to, set_pacing
from store.queries.runtime import get_marker
from store.tables import OutboxRow
from usecases.errors import UnknownAgentError, UseCaseError
from usecases.store import open_store

POLL_S = 0.2


class StopReason(StrEnum):
    """Why a conversation between agents ended."""

    SILENCE = "silence"
    """An agent chose not to answer (its reply added nothing, or it judged it so)."""
    BLOCKED = "blocked"
    """Pacing stopped it: a reply the token budget could not afford was never generated, or a
    message was refused (budget or turn limit spent)."""
    FAILED = "failed"
    """A delivery or an activation failed."""
    TIMEOUT = "timeout"
    """The follower stopped waiting; the agents may still be talking."""


@dataclass(frozen=True)
class ExchangeEvent:
    """One thing a follower sees: a message that went from one agent to the other, or the end."""

    sender: str
    recipient: str
    message_id: str
    text: str | None = None
    stopped: StopReason | None = None
    reason: str | None = None


async def _check_agents(db: Database, first: str, second: str) -> dict[str, str]:
    if first == second:
        raise UseCaseError("an agent does not converse with itself: name two different agents")
    names = {}
    async with db.session() as session:
        for handle in (first, second):
            found = await get_agent(session, handle=handle)
            if found is None:
                raise UnknownAgentError(handle)
            names[handle] = found.name
    return names


async def start_conversation(
    *,
    settings: Settings,
    client: Client,
    first: str,
    second: str,
    opening: str,
    max_turns: int | None = None,
    task_queue: str | None = None,
) -> str:
    """Send ``opening`` from ``first`` to ``second``; returns the opening's message ID.

    Args:
        settings: Where the store and Temporal are.
        client: A connected Temporal client.
        first: The agent that opens.
        second: The agent it speaks to.
        opening: The first message, as ``first`` says it.
        max_turns: Store a turn limit for both channels: together at most this many messages
            per pacing window (the first agent gets the odd one).
        task_queue: Where the workflows run (default: the settings').

    Raises:
        UnknownAgentError: An agent does not exist.
        UseCaseError: The same agent twice.
        InvalidTextError: The opening is not valid text.
    """
    text = clean_text(opening, what="opening")
    message_id = new_ulid()
    now = datetime.now(UTC)
    async with open_store(settings, pool_size=2) as db:
        names = await _check_agents(db, first, second)
        async with db.session() as session:
            if max_turns is not None:
                for handle, other, share in (
                    (first, second, (max_turns + 1) // 2),
                    (second, first, max(1, max_turns // 2)),
                ):
                    await set_pacing(
                        session,
                        agent=handle,
                        channel_key=agent_channel(other).key,
                        values={"max_messages": share},
                        at=now,
                    )
            await send_unprompted(
                session,
                message_id=message_id,
                agent=first,
                agent_name=names[first],
                channel=agent_channel(second),
                text=text,
                at=now,
            )
    await start_delivery(
        client,
        message_id=message_id,
        agent=first,
        channel=agent_channel(second),
        unprompted=True,
        settings=settings.delivery,
        task_queue=task_queue or settings.task_queue,
    )
    return message_id


async def follow_conversation(
    *, settings: Settings, opening_id: str, timeout: float = 600.0
) -> AsyncIterator[ExchangeEvent]:
    """Each message of the conversation that ``opening_id`` began, then why it stopped.

    Reads only PostgreSQL (outbox rows and completion markers), every ``POLL_S`` seconds.
    """
    deadline = time.monotonic() + timeout
    current = opening_id
    async with open_store(settings, pool_size=1) as db:
        while True:
            row = await _poll(deadline, partial(_settled_row, db, current))
            if row is None:
                yield _timed_out(current)
                return
            sender, recipient = row.agent, row.channel_key.partition(":")[2]
            if row.status in (DeliveryStatus.BLOCKED, DeliveryStatus.FAILED):
                kind = (
                    StopReason.BLOCKED
                    if row.status == DeliveryStatus.BLOCKED
                    else StopReason.FAILED
                )
                yield ExchangeEvent(sender, recipient, row.id, stopped=kind, reason=row.last_error)
                return
            yield ExchangeEvent(sender, recipient, row.id, text=row.text)
            marker = await _poll(deadline, partial(_marker, db, peer_event_id(row.id)))
            if marker is None:
                yield _timed_out(row.id)
                return
            if marker.outcome is Outcome.SILENT:
                # A reply the budget could not afford was never generated: pacing stopped it.
                spent = (marker.reason or "").startswith(BUDGET_EXHAUSTED)
                kind = StopReason.BLOCKED if spent else StopReason.SILENCE
                yield ExchangeEvent(recipient, sender, row.id, stopped=kind, reason=marker.reason)
                return
            reply = await _reply(db, marker.activation_id)
            if reply is None:
                yield ExchangeEvent(
                    recipient, sender, row.id, stopped=StopReason.FAILED, reason=marker.reason
                )
                return
            current = reply.id


T = TypeVar("T")


async def _poll(deadline: float, probe: Callable[[], Awaitable[T | None]]) -> T | None:
    """``probe()`` until it gives something or the deadline passes."""
    while time.monotonic() < deadline:
        found = await probe()
        if found is not None:
            return found
        await asyncio.sleep(POLL_S)
    return None


async def _settled_row(db: Database, message_id: str) -> OutboxRow | None:
    """The row once its delivery has ended (delivered, blocked or failed)."""
    async with db.session() as session:
        row = await get_message(session, message_id=message_id)
        if row is None:
            raise UseCaseError(f"there is no message {message_id}")
        await session.refresh(row)
    return None if row.status == DeliveryStatus.PENDING else row


async def _marker(db: Database, event_id: str) -> CompletionMarker | None:
    async with db.session() as session:
        return await get_marker(session, event_id=event_id, now=datetime.now(UTC))


async def _reply(db: Database, activation_id: str | None) -> OutboxRow | None:
    if activation_id is None:
        return None
    async with db.session() as session:
        return await reply_to(session, activation_id=activation_id)


def _timed_out(message_id: str) -> ExchangeEvent:
    return ExchangeEvent(
        "", "", message_id, stopped=StopReason.TIMEOUT, reason="stopped following (timeout)"
    )
