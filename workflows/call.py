"""``CallWorkflow``: one live voice call, from its first turn (or its dialling) to hang-up.

Lifecycle: started as ``call/{call_id}`` (the transport's stable call identifier) by the web
channel when a call's first turn arrives, or by ``place_call`` when the agent dials, with the
call's direction; a start for a call already running joins it. Messages: ``call_turn`` (a turn
was answered: names the call's conversation, resets the idle timer), ``call_conclusion`` (a
background run's conclusion, queued for the next spoken answer), ``conclusions_taken`` (the
spoken answer wove them in), ``hang_up``; the ``call_state`` query. Ends on hang-up, when no
turn came for ``idle_timeout_s``, or when cancelled. A call is short, so it never continues as
new.

It is the call's durable session: the web process keeps a cache of it for speed, and rebuilds
that cache from here when it restarts. It holds the agent's lock for the whole call: as it
starts it tells the agent ``call_began``, and as it ends ``call_ended`` (internal signals;
``workflows.call_hold``). Meanwhile the agent dispatches only the call's own turns, each the
full pipeline's background run under a fresh activation ID, and every other event waits. A
call terminated or failed cannot say it ended: the agent lets its hold lapse once nothing of
the call has reached the inbox for ``idle_timeout_s`` and a grace (docs/channels.md, "Live
voice").
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow

from contract import names
from schemas.voice import (
    CallBegan,
    CallConclusion,
    CallEnded,
    CallState,
    CallStateQuery,
    CallTurnSignal,
    ConclusionsTaken,
    HangUp,
    StartCallInput,
)
from workflows import call_hold, handlers

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
        """Take the agent's lock, wait for messages until hang-up or an idle spell, give it back.

        The final state is the result.
        """
        holding = workflow.patched(call_hold.PATCH) and await self._tell_agent(
            names.CALL_BEGAN,
            CallBegan(
                call_id=data.call_id,
                tenant=data.tenant,
                person_name=data.person_name,
                number=data.number,
                idle_timeout_s=data.idle_timeout_s,
            ),
        )
        idle = timedelta(seconds=data.idle_timeout_s)
        try:
            while self._state.ended is None:
                self._seen = self._heard
                try:
                    await workflow.wait_condition(
                        self._stirred, timeout=idle, timeout_summary="the call's idle end"
                    )
                except TimeoutError:
                    self._state.ended = "idle"
        except asyncio.CancelledError:
            # An operator cancelled the call: the agent must not wait for it to go silent.
            if holding:
                await self._tell_agent(names.CALL_ENDED, self._ended("cancelled"))
            raise
        if holding:
            await self._tell_agent(names.CALL_ENDED, self._ended(self._state.ended))
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._state

    def _ended(self, reason: str) -> CallEnded:
        return CallEnded(call_id=self._state.call.call_id, reason=reason[:200])

    async def _tell_agent(self, signal: str, message: CallBegan | CallEnded) -> bool:
        """Signal the call's agent; whether it heard (an agent never started cannot)."""
        agent = names.agent_workflow_id(self._state.call.agent)
        try:
            await workflow.get_external_workflow_handle(agent).signal(signal, message)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            workflow.logger.warning("%s not told %s: %s", agent, signal, err)
            return False
        return True

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
