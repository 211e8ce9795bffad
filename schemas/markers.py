"""Completion markers: how long one lives and how each outcome's marker is made.

Every marker a workflow makes comes from here (the activation's outcome, a failed or
terminated activation, an event the agent could not route or refused), so each carries the
same lifetime. A marker is session state, not memory: it answers a waiting ``submit`` or a
polling integrator for :data:`MARKER_TTL`, then the agent and maintenance drop it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from schemas.events import CompletionMarker, Outcome

MARKER_TTL = timedelta(hours=1)
"""How long a completion marker lives, in the agent's state and in PostgreSQL."""


def completion_marker(
    *,
    event_id: str,
    outcome: Outcome,
    at: datetime,
    activation_id: str | None = None,
    conversation_id: str | None = None,
    text: str | None = None,
    reason: str | None = None,
    degraded: bool = False,
) -> CompletionMarker:
    """The marker of an event that ended with ``outcome`` at ``at`` (``workflow.now()``).

    Args:
        event_id: The event the marker answers.
        outcome: How it ended.
        at: When it ended; the marker expires :data:`MARKER_TTL` later.
        activation_id: The activation that ran for it, if one did.
        conversation_id: The conversation it went to, if any.
        text: The transmitted reply, if the agent spoke.
        reason: Why the agent stayed silent, failed or degraded.
        degraded: The reply is the safe fallback.
    """
    return CompletionMarker(
        event_id=event_id,
        activation_id=activation_id,
        conversation_id=conversation_id,
        outcome=outcome,
        text=text,
        reason=reason,
        degraded=degraded,
        completed_at=at,
        expires_at=at + MARKER_TTL,
    )


def failed_marker(
    event_id: str,
    reason: str,
    *,
    at: datetime,
    activation_id: str | None = None,
    conversation_id: str | None = None,
) -> CompletionMarker:
    """The marker of an event that failed at ``at``, saying why (see :func:`completion_marker`)."""
    return completion_marker(
        event_id=event_id,
        outcome=Outcome.FAILED,
        at=at,
        activation_id=activation_id,
        conversation_id=conversation_id,
        reason=reason,
    )
