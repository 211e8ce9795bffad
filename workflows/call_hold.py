"""A live call's hold on its agent's lock, as pure functions of the inbox's state (workflow-side).

A call asks for the lock when its ``CallWorkflow`` starts (``call_began``) and gives it back when
it ends (``call_ended``). The calls that asked queue in ``AgentState.calls`` in the order they
asked; the first takes the lock once the inbox is free (the event in flight, if any, has ended)
and keeps it until its end. While it holds, the inbox dispatches only the events on the call's
channel, each as soon as the one before it ended, in arrival order; every other event waits in
the queue, in its own order, until the call ends. Its events run one at a time, as every event
of a conversation does: each turn's run reads the turn and reply before it.

A call that can no longer say it ended (its workflow terminated or failed) must not hold the
agent for ever: the hold lapses once nothing of the call has reached the inbox for the call's
own idle time and :data:`schemas.voice.HOLD_GRACE_S` more (the call's workflow would have ended
by then). Kept apart from ``workflows/agent.py``, which holds the handlers and the loop.

Deterministic: no I/O, only values the workflow passes in.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from schemas.agents import AgentState, CallHold
from schemas.events import ChannelRef, InboundEvent
from schemas.voice import HOLD_GRACE_S, CallBegan, on_call_channel

PATCH = "call-holds-lock"
"""A call's ``call_began`` takes its agent's lock; runs recorded before had no such signal,
and a ``CallWorkflow`` recorded before sent neither it nor ``call_ended``."""

MIN_WAIT = timedelta(seconds=1)
"""The shortest wait for a hold's deadline (one already due is checked at once)."""


def holder(state: AgentState) -> CallHold | None:
    """The call holding the lock now, if one does."""
    first = state.calls[0] if state.calls else None
    return first if first is not None and first.since is not None else None


def matches(hold: CallHold, channel: ChannelRef) -> bool:
    """Whether ``channel`` is the channel of the call of ``hold``."""
    if hold.channel_key is not None:
        return channel.key == hold.channel_key
    return on_call_channel(channel, call_id=hold.call.call_id, tenant=hold.call.tenant)


def ask(state: AgentState, call: CallBegan, *, now: datetime, free: bool) -> bool:
    """Queue ``call`` for the lock (once); it takes it now if the inbox is ``free``.

    Returns whether the call was new.
    """
    if any(hold.call.call_id == call.call_id for hold in state.calls):
        return False
    state.calls.append(CallHold(call=call, asked_at=now, heard_at=now))
    if free:
        take(state, now=now)
    return True


def end(state: AgentState, call_id: str) -> CallHold | None:
    """Drop the call ``call_id`` from the calls holding or waiting; the one dropped, if any."""
    for index, hold in enumerate(state.calls):
        if hold.call.call_id == call_id:
            return state.calls.pop(index)
    return None


def take(state: AgentState, *, now: datetime) -> None:
    """The inbox is free: the first call waiting takes the lock (no-op when one holds it)."""
    if state.calls and state.calls[0].since is None:
        first = state.calls[0]
        first.since = now
        # The time it waited is no silence of the call's own.
        first.heard_at = max(first.heard_at, now)


def heard(state: AgentState, channel: ChannelRef, *, now: datetime) -> None:
    """Something of a call arrived on ``channel`` or ended there: the call is alive."""
    for hold in state.calls:
        if matches(hold, channel):
            hold.channel_key = channel.key
            hold.heard_at = now
            return


def deadline(hold: CallHold) -> datetime:
    """When the hold lapses unless the call is heard of again."""
    return hold.heard_at + timedelta(seconds=hold.call.idle_timeout_s + HOLD_GRACE_S)


def settle(state: AgentState, *, now: datetime) -> CallHold | None:
    """Between events: end a silent call's hold, then let the first call waiting take the lock.

    Returns the hold that lapsed (its call silent past its deadline), if one did.
    """
    hold = holder(state)
    lapsed = state.calls.pop(0) if hold is not None and deadline(hold) <= now else None
    take(state, now=now)
    return lapsed


def wait_limit(state: AgentState, *, now: datetime) -> timedelta | None:
    """How long the idle inbox may wait before the holding call's deadline (``None``: no hold)."""
    hold = holder(state)
    if hold is None:
        return None
    return max(deadline(hold) - now, MIN_WAIT)


def next_index(state: AgentState) -> int | None:
    """The queue position of the next event to dispatch, or ``None`` when none may go now.

    Without a call's hold, the first in line; while a call holds the lock, the first on the
    call's channel (the rest wait for the call to end); while a call waits to take it, none
    (the inbox is free, so it takes it first).
    """
    if not state.queue:
        return None
    if not state.calls:
        return 0
    hold = holder(state)
    if hold is None:
        return None
    return next((i for i, event in enumerate(state.queue) if matches(hold, event.channel)), None)


def on_held_call(state: AgentState, event: InboundEvent) -> bool:
    """Whether ``event`` is on the channel of the call holding the lock."""
    hold = holder(state)
    return hold is not None and matches(hold, event.channel)
