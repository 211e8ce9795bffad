"""What the agent's inbox tells clients, as pure functions of its state (workflow-side).

Why a client's event is refused, what the ``status`` query says the event in flight is
doing, and what the run's current details say of the inbox. Kept apart from
``workflows/agent.py``, which holds the inbox's handlers and its loop.
"""

from __future__ import annotations

from schemas.agents import AgentState, InFlightStatus
from schemas.autonomy import SELF_SERVICE
from schemas.events import InboundEvent, Trigger, event_digest
from schemas.peers import AGENT_SERVICE
from workflows.steps import Progress


def client_refusal(event: InboundEvent) -> str | None:
    """Why a client's event is refused: internal triggers and channels are the agent's own."""
    if event.trigger is not Trigger.MESSAGE:
        return (
            f"event.trigger: {event.trigger.value!r} is set by the agent itself; "
            "send 'message' or leave the field out"
        )
    if event.channel.service == SELF_SERVICE:
        return (
            f"event.channel.service: {SELF_SERVICE!r} is the agent's own service; "
            "name your surface (web, slack, ...)"
        )
    if event.channel.service == AGENT_SERVICE:
        # Only the agent adapter speaks as another agent, through the internal peer update.
        return (
            f"event.channel.service: {AGENT_SERVICE!r} is reserved for messages between "
            "agents; name your surface (web, slack, ...)"
        )
    return None


def id_conflict(state: AgentState, event: InboundEvent) -> str | None:
    """Why an event reuses a known event ID for something else (an idempotency conflict)."""
    known = state.digests.get(event.event_id)
    if known is None or known == event_digest(event):
        return None
    return (
        f"event_id {event.event_id} was already used for a different event: "
        "give each new event a new ID (reuse an ID only to retry the same event)"
    )


def in_flight_status(
    state: AgentState, current: InboundEvent | None, progress: Progress | None
) -> InFlightStatus | None:
    """What the event taken from the queue (``current``) is doing, for the ``status`` query."""
    if current is None:
        return None
    received_at = state.received.get(current.event_id)
    flight = state.in_flight
    if flight is not None and flight.event.event_id == current.event_id:
        who = f"activation {flight.activation_id}" if flight.activation_id else "activation"
        return InFlightStatus(
            event_id=current.event_id,
            received_at=received_at,
            step=f"answering: {who} in conversation {flight.conversation_id}",
            step_since=flight.dispatched_at,
            conversation_id=flight.conversation_id,
            activation_id=flight.activation_id,
        )
    if progress is None:
        return InFlightStatus(
            event_id=current.event_id, received_at=received_at, step="routing to a conversation"
        )
    return InFlightStatus(
        event_id=current.event_id,
        received_at=received_at,
        step=progress.step,
        attempt=progress.attempt,
        step_since=progress.started_at,
        last_error=progress.last_error,
    )


def inbox_details(state: AgentState) -> str:
    """The inbox in one line, for the run's current details (the Web UI shows them)."""
    details = (
        f"inbox and lock of agent {state.handle}: "
        f"{len(state.queue)} queued, {state.handled} handled, "
        f"{len(state.open)} open conversations"
    )
    if not state.calls:
        return details
    first = state.calls[0]
    if first.since is None:
        return f"{details}; {first.describe()} waits for the lock"
    return f"{details}; {first.describe()} since {first.since:%H:%M:%S} UTC"
