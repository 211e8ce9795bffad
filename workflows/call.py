"""``CallWorkflow``: one live voice call, from its first turn (or its dialling) to hang-up.

Lifecycle: started as ``call/{call_id}`` (the transport's stable call identifier) by the web
channel when a call's first turn arrives, or by ``place_call`` when the agent dials, with the
call's direction; a start for a call already running joins it. Messages: ``call_turn`` (a turn
was answered: names the call's conversation, resets the idle timer), ``call_conclusion`` (a
background run's conclusion, queued for the next spoken answer), ``conclusions_taken`` (the
spoken answer wove them in), ``hang_up``; the ``call_state`` query. Ends on hang-up or when no
turn came for ``idle_timeout_s``. A call is short, so it never continues as new.

It is the call's durable session: the web process keeps a cache of it for speed, and rebuilds
that cache from here when it restarts. It does not hold the agent's lock (docs/channels.md,
"Live voice": the background runs go through the agent's inbox, which the lock serialises).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from contract import names
from schemas.voice import (
    CallConclusion,
    CallState,
    CallStateQuery,
    CallTurnSignal,
    ConclusionsTaken,
    HangUp,
    StartCallInput,
)
from workflows import handlers

MAX_PENDING = 20
"""Conclusions kept waiting at most; older ones are dropped first (the latest matter most)."""


@workflow.defn(name=names.CALL_WORKFLOW)
class CallWorkflow:
    """Keeps a call's conversation, direction and queued conclusions until it ends."""

    @workflow.init
    def __init__(self, data: StartCallInput) -> None:
        self._state = CallState(call=data)
        self._heard = 0  # messages that count as the call being alive
        self._seen = 0  # how many of them the idle timer last started after

    @workflow.run
    async def run(self, data: StartCallInput) -> CallState:
        """Wait for messages until hang-up or an idle spell; the final state is the result."""
        idle = timedelta(seconds=data.idle_timeout_s)
        while self._state.ended is None:
            self._seen = self._heard
            try:
                await workflow.wait_condition(self._stirred, timeout=idle)
            except TimeoutError:
                self._state.ended = "idle"
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._state

    def _stirred(self) -> bool:
        return self._heard != self._seen or self._state.ended is not None

    @workflow.signal(
        name=names.CALL_TURN,
        description="A settled turn was answered (a CallTurnSignal naming the conversation).",
    )
    @handlers.guarded_signal(CallTurnSignal)
    def turn(self, data: CallTurnSignal) -> None:
        """A settled turn was answered; the first names the call's conversation for good."""
        self._heard += 1
        self._state.turns += 1
        if self._state.conversation_id is None and data.conversation_id is not None:
            self._state.conversation_id = data.conversation_id

    @workflow.signal(
        name=names.CALL_CONCLUSION,
        description="A background run's conclusion, queued for the next spoken answer.",
    )
    @handlers.guarded_signal(CallConclusion)
    def conclusion(self, data: CallConclusion) -> None:
        """Queue what a background run concluded."""
        self._heard += 1
        if data.activation_id not in self._state.pending:
            self._state.pending = [*self._state.pending, data.activation_id][-MAX_PENDING:]

    @workflow.signal(
        name=names.CONCLUSIONS_TAKEN,
        description="The spoken answer wove in the first queued conclusions.",
    )
    @handlers.guarded_signal(ConclusionsTaken)
    def taken(self, data: ConclusionsTaken) -> None:
        """Drop the conclusions the spoken answer wove in."""
        self._state.pending = self._state.pending[data.count :]

    @workflow.signal(name=names.HANG_UP, description="The call ended (a HangUp).")
    @handlers.guarded_signal(HangUp)
    def hang_up(self, data: HangUp) -> None:
        """The call ended."""
        if self._state.ended is None:
            self._state.ended = data.reason

    @workflow.query(name=names.CALL_STATE, description="The call as it stands.")
    @handlers.guarded_query(CallStateQuery, optional=True)
    def state(self, _: CallStateQuery) -> CallState:
        """The call as it stands."""
        return self._state
