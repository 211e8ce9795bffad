"""``ConversationWorkflow``: one session on one channel.

Lifecycle: started by its agent as ``conversation/{ulid}`` (a child that outlives the agent's
continue-as-new) with the first input; receives later inputs through the ``inbound`` signal and
runs one ``ActivationWorkflow`` per input, in order. It holds the verbatim dialog window (the
source of truth while open; every turn is written through to PostgreSQL). After
``idle_seconds`` without input it closes: records the close, tells its agent with
``conversation_closed`` and ends; inputs that arrive after that point are re-routed by the
agent. It continues as new, with its state, when Temporal suggests it.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import (
    ChildWorkflowError,
    TerminatedError,
)

from contract import attribution, names
from contract.policies import (
    ACTIVATION_RUN_LIMIT,
    DATABASE,
    MESSAGE_STEP,
    summarized_local,
)
from schemas.activation import ActivationInput, ActivationResult
from schemas.contacts import PersonFolded
from schemas.conversation import (
    ConversationClosed,
    ConversationInput,
    ConversationState,
    ExchangeDone,
    InboundTurn,
    RememberNow,
    RememberNowResult,
    TurnTaken,
    WindowAnswer,
    WindowQuery,
)
from schemas.dialog import DialogTurn, Role
from schemas.erasure import ForgetTurns
from schemas.events import CompletionMarker, person_text
from schemas.guardrails import EndConversationRequest
from schemas.ids import ulid_from_parts
from schemas.markers import failed_marker
from schemas.records import CloseConversationInput, OpenConversationInput, RecordTurnInput
from workflows import (
    conversation_hooks,
    guardrail_hooks,
    handlers,
    idle_timer,
    run_length,
    up_front,
)
from workflows.activation import ActivationWorkflow
from workflows.admission import activation_failure, activation_options
from workflows.lock import release
from workflows.pipeline import termination
from workflows.steps import StepFailedError, bounded

with workflow.unsafe.imports_passed_through():
    from activities.admission import AdmissionActivities
    from activities.store import StoreActivities

PATCH_GUARDED_CLOSE = "guarded-close"
"""A close is refused while a turn the agent admitted has not reached the conversation; runs
recorded before closed unconditionally."""

EXCHANGE_LIMIT = ACTIVATION_RUN_LIMIT + timedelta(minutes=2)
"""Longest a conversation waits for an admitted turn's exchange to end before going idle."""

PATCH_ACTIVATION_TASK_TIMEOUT = "activation-task-timeout"
"""Activations start with ``contract.policies.ACTIVATION_TASK_TIMEOUT``. Deprecated: runs
recorded before it replay the same commands (a child's task timeout is not compared)."""

PATCH_UP_FRONT = "conversation-patches-up-front"
"""The run asks every patch below before its first local activity (``workflows/up_front.py``)."""
ASKED_UP_FRONT = (
    PATCH_GUARDED_CLOSE,
    termination.PATCH,
    *conversation_hooks.PATCHES,
    *guardrail_hooks.PATCHES,
)
"""Every patch a conversation's run asks, wherever it asks it (and ``run_length.asked``'s)."""

IDLE_SUMMARY = "idle timeout: the conversation closes without new input"
"""What the Web UI shows on the idle timer, kept or restarted."""

OPEN_STEP = "record the conversation"
WRITE_STEP = "write the input through"
"""The conversation's own steps on an event's path (``workflows.steps.bounded``)."""


@workflow.defn(name=names.CONVERSATION_WORKFLOW)
class ConversationWorkflow:
    """A session: ordered activations over a verbatim window, closed when idle."""

    @workflow.init
    def __init__(self, data: ConversationInput) -> None:
        self._input = data
        self._state = data.state or ConversationState()
        if data.state is None and data.first is not None:
            self._state.pending.append(data.first)
        self._closing = False
        self._ending: str | None = None  # why to close now (a guardrail or an operator)
        self._guarding: guardrail_hooks.Running | None = None
        self._close_reason = "idle"
        self._closed_at: datetime | None = None  # set by ``_closed``
        # Asks to remember now (persyn down): counted by the update, served by the loop.
        self._remember_asked = 0
        self._remember_served = 0
        self._remembered = RememberNowResult(started=False, detail="not asked")
        self._continuing = False  # the run is about to continue as new
        self._idle_timer = idle_timer.IdleTimer(IDLE_SUMMARY)

    @workflow.signal(
        name=names.INBOUND,
        description="Internal: the agent hands this conversation its next input (an InboundTurn).",
    )
    @handlers.guarded_signal(InboundTurn)
    def inbound(self, turn: InboundTurn) -> None:
        """Queue an input (ignored once closing: the agent re-routes it)."""
        if self._closing or self._seen(turn.event.event_id):
            return
        self._state.pending.append(turn)

    @workflow.signal(
        name=names.TURN_TAKEN,
        description="Internal: the agent admitted a person's turn to this conversation and "
        "started its activation (a TurnTaken; agents' runs from before turn-in-exchange).",
    )
    @handlers.guarded_signal(TurnTaken)
    def turn_taken(self, taken: TurnTaken) -> None:
        """Queue an admitted turn for the window (taken even while closing: see ``_close``)."""
        if not self._seen(taken.turn.turn_id):
            self._state.taken.append(taken)

    @workflow.signal(
        name=names.EXCHANGE_DONE,
        description="Internal: an activation the agent started ended (an ExchangeDone, with "
        "the person's turn when the conversation was not told of it before).",
    )
    @handlers.guarded_signal(ExchangeDone)
    def exchange_done(self, done: ExchangeDone) -> None:
        """Queue the end of an exchange: its turns join the window, its background starts.

        Accepted once per activation: one this conversation awaits, or one whose person's turn
        it carries and the window does not hold yet.
        """
        if any(d.activation_id == done.activation_id for d in self._state.done):
            return
        awaited = done.activation_id in self._state.awaiting or any(
            t.inbound.activation_id == done.activation_id for t in self._state.taken
        )
        if awaited or (done.taken is not None and not self._seen(done.taken.turn.turn_id)):
            self._state.done.append(done)

    @workflow.query(
        name=names.WINDOW,
        description="The verbatim dialog window, the participants and the inputs still pending.",
    )
    @handlers.guarded_query(WindowQuery, optional=True)
    def window(self, _: WindowQuery) -> WindowAnswer:
        """The verbatim window and who took part."""
        return WindowAnswer(
            conversation_id=self._input.conversation_id,
            window=self._state.window,
            participants=self._state.participants,
            pending=len(self._state.pending),
        )

    @workflow.signal(
        name=names.FORGET_TURNS,
        description="Internal: drop window turns older than a moment (dialog retention ran).",
    )
    @handlers.guarded_signal(ForgetTurns)
    def forget_turns(self, data: ForgetTurns) -> None:
        """Drop the window's turns said before ``data.before`` (dialog retention ran)."""
        self._state.window = [t for t in self._state.window if t.at >= data.before]

    @workflow.signal(
        name=names.PERSON_FOLDED,
        description="Internal: the operator folded one participant into another (PersonFolded).",
    )
    @handlers.guarded_signal(PersonFolded)
    def person_folded(self, data: PersonFolded) -> None:
        """Name the survivor instead of the folded person among the participants, once."""
        if data.folded not in self._state.participants:
            return
        merged = [data.survivor if p == data.folded else p for p in self._state.participants]
        self._state.participants = list(dict.fromkeys(merged))

    @workflow.signal(
        name=names.END_CONVERSATION,
        description="Close now, once the inputs already queued are answered "
        "(an EndConversationRequest: a guardrail fired, or an operator asked).",
    )
    @handlers.guarded_signal(EndConversationRequest)
    def end_conversation(self, data: EndConversationRequest) -> None:
        """Close after the inputs already queued (the first reason given wins)."""
        if self._ending is None:
            self._ending = data.reason

    @workflow.update(
        name=names.REMEMBER_NOW,
        description="Consolidate what was said since the last memory formed, now (a "
        "RememberNow; `persyn down` sends it so memories form as of the stop). Returns once "
        "the consolidation started: it finishes on its own, after a restart if need be.",
    )
    @handlers.guarded_update(RememberNow)
    async def remember_now(self, data: RememberNow) -> RememberNowResult:
        """Have the loop consolidate between exchanges, and say whether it started."""
        workflow.logger.info("asked to remember now: %s", data.reason)
        self._remember_asked += 1
        ticket = self._remember_asked
        await workflow.wait_condition(
            lambda: self._remember_served >= ticket or self._closing or self._continuing
        )
        if self._remember_served >= ticket:
            return self._remembered
        if self._closing:
            return RememberNowResult(started=False, detail="closing: its close forms the memory")
        return RememberNowResult(started=False, detail="moving to a new run: ask again")

    def _remember_waiting(self) -> bool:
        return self._remember_asked > self._remember_served

    async def _remember_now(self) -> None:
        """Serve the asks to remember now, in the loop (never beside a chunk's consolidation)."""
        asked = self._remember_asked
        self._remembered = await conversation_hooks.remember_now(self._input, self._state)
        self._remember_served = asked

    def _seen(self, event_id: str) -> bool:
        return (
            any(t.event.event_id == event_id for t in self._state.pending)
            or any(t.turn_id == event_id for t in self._state.window)
            or any(t.turn.turn_id == event_id for t in self._state.taken)
        )

    def _news(self) -> bool:
        """Whether anything waits to be handled: an input, an admitted turn, an exchange."""
        return bool(self._state.pending or self._state.taken or self._state.done)

    def _remember(self, turn: DialogTurn) -> None:
        self._state.window.append(turn)
        del self._state.window[: -self._input.window_turns]
        self._state.turns += 1
        self._state.last_activity = turn.at

    @workflow.run
    async def run(self, data: ConversationInput) -> ConversationClosed:
        """Run activations until the conversation goes idle."""
        # A run that continued one which asked them all asks none (its input's state says so).
        if not self._state.asked_up_front:
            self._state.asked_up_front = up_front.ask(
                PATCH_UP_FRONT, (*ASKED_UP_FRONT, *run_length.asked(data))
            )
        # Asked here, before any local activity, and carried on: a continued run asks none.
        if not self._state.idle_timer_kept:
            self._state.idle_timer_kept = workflow.patched(idle_timer.PATCH)
        attribution.bind(
            agent=data.agent, channel=data.channel.key, conversation=data.conversation_id
        )
        if not self._state.opened:
            opening = OpenConversationInput(
                conversation_id=data.conversation_id,
                agent=data.agent,
                channel=data.channel,
                opened_at=workflow.now(),
            )
            try:
                await bounded(
                    lambda: workflow.execute_local_activity_method(
                        StoreActivities.open_conversation,
                        opening,
                        **summarized_local(MESSAGE_STEP, OPEN_STEP),
                    ),
                    step=OPEN_STEP,
                    doing=f"{data.agent} opening a conversation on {data.channel.key}",
                )
            except StepFailedError as err:
                return await self._abandon(str(err))
            self._state.opened = True
        # Continue as new at the run's history limit, not only at Temporal's suggestion
        # (thousands of events): a restarted worker replays every open conversation first.
        history_limit = (
            data.history_limit if self._state.asked_up_front else run_length.history_limit(data)
        )
        while True:
            workflow.set_current_details(
                f"{data.agent} on {data.channel.key}: {self._state.turns} turns, waiting for input"
            )
            if not await self._heard(data):
                if await self._closed(reason=self._ending or "idle"):
                    break
                continue
            if self._remember_waiting():
                await self._remember_now()
                continue
            if not self._news():  # asked to end, and nothing is left to answer
                if await self._closed(reason=self._ending or "idle"):
                    break
                continue
            if self._state.taken:
                self._take(self._state.taken.pop(0))
            elif self._state.done:
                await self._exchanged(self._state.done.pop(0))
            else:
                await self._handle(self._state.pending.pop(0))
            if self._time_to_continue(history_limit):
                if self._remember_waiting():
                    await self._remember_now()
                self._continuing = True  # asks from now on are told to ask again
                await workflow.wait_condition(workflow.all_handlers_finished)
                # An end asked for meanwhile is not part of the state: let the loop take it.
                if history_limit is None or self._ending is None:
                    workflow.continue_as_new(
                        data.model_copy(update={"state": self._state, "first": None})
                    )
                self._continuing = False
        return await self._end(data)

    def _woken(self) -> bool:
        return self._news() or self._ending is not None or self._remember_waiting()

    async def _heard(self, data: ConversationInput) -> bool:
        """Wait for news: ``False`` once the conversation has been idle for its idle time."""
        if self._state.idle_timer_kept:
            return await self._idle_timer.wait(self._woken, idle=self._idle(data))
        try:  # runs recorded before the kept timer: one timer per wait
            await workflow.wait_condition(
                self._woken,
                timeout=self._idle(data),
                timeout_summary=IDLE_SUMMARY,
            )
        except TimeoutError:
            return False
        return True

    def _idle(self, data: ConversationInput) -> timedelta:
        """How long to wait for news: while an exchange is out, until its activation must end."""
        idle = timedelta(seconds=data.idle_seconds)
        return max(idle, EXCHANGE_LIMIT) if self._state.awaiting else idle

    def _take(self, taken: TurnTaken) -> None:
        """An admitted turn joins the window; its exchange is awaited."""
        self._remember(taken.turn)
        self._state.last_input = taken.turn.turn_id
        person = taken.inbound.person_id
        if person not in self._state.participants:
            self._state.participants.append(person)
        if taken.inbound.activation_id is not None:
            self._state.awaiting[taken.inbound.activation_id] = taken.inbound

    async def _exchanged(self, done: ExchangeDone) -> None:
        """An exchange ended: its turns join the window and its background work starts."""
        if done.taken is not None and not self._seen(done.taken.turn.turn_id):
            self._take(done.taken)  # admitted to this open conversation, heard of only now
        turn = self._state.awaiting.pop(done.activation_id, None)
        if turn is None:
            return
        if done.reply is not None:
            self._remember(done.reply)
        # Background work started now belongs to this exchange (its cost and its trace).
        attribution.bind(activation=done.activation_id)
        await conversation_hooks.after_turn(self._input, self._state)
        running = await guardrail_hooks.screen(self._input, turn, done.activation_id, done.reply)
        self._guarding = running or self._guarding

    def _time_to_continue(self, history_limit: int | None) -> bool:
        if self._ending is not None:
            return False
        info = workflow.info()
        if history_limit is None:  # a run recorded before the limit: as it was then
            return info.is_continue_as_new_suggested() and not self._state.pending
        # Turns already waiting go along in the state, so a busy conversation continues too.
        return (
            info.is_continue_as_new_suggested()
            or info.get_current_history_length() >= history_limit
        )

    async def _handle(self, turn: InboundTurn) -> None:
        data, event = self._input, turn.event
        person_turn = DialogTurn(
            turn_id=event.event_id,
            conversation_id=data.conversation_id,
            role=Role.PERSON,
            speaker_id=turn.person_id,
            speaker_name=turn.person_name,
            # The same text as before for an event without pictures: old histories replay.
            text=person_text(event),
            at=workflow.now(),
        )
        writing = RecordTurnInput(agent=data.agent, channel=data.channel, turn=person_turn)
        try:
            await bounded(
                lambda: workflow.execute_local_activity_method(
                    StoreActivities.record_turn,
                    writing,
                    **summarized_local(MESSAGE_STEP, WRITE_STEP),
                ),
                step=WRITE_STEP,
                doing=f"{data.agent} on {data.channel.key}, event {event.event_id}",
            )
        except StepFailedError as err:
            # Nothing of the event was stored: it ends here, and the next input is taken.
            await release(data.agent, self._failed(turn, str(err)))
            return
        self._remember(person_turn)
        self._state.last_input = person_turn.turn_id
        if turn.person_id not in self._state.participants:
            self._state.participants.append(turn.person_id)
        activation_id = turn.activation_id or ulid_from_parts(
            workflow.now(), workflow.random().getrandbits(80)
        )
        # Deprecated (docs/operations.md, "The life of a patch"): a run recorded before the
        # patch started its activations without a task timeout, which replay does not compare.
        workflow.deprecate_patch(PATCH_ACTIVATION_TASK_TIMEOUT)
        try:
            activation = ActivationInput(
                activation_id=activation_id,
                agent=data.agent,
                agent_name=data.agent_name,
                conversation_id=data.conversation_id,
                channel=data.channel,
                event=event,
                person_id=turn.person_id,
                person_name=turn.person_name,
                participants=list(self._state.participants),
                window_turn_ids=[t.turn_id for t in self._state.window],
            )
            result: ActivationResult = await workflow.execute_child_workflow(
                ActivationWorkflow.run, activation, **activation_options(activation)
            )
        except ChildWorkflowError as err:
            # The pipeline degrades rather than fails, so this is a step that gave up (the
            # database), a bug or an operator's termination: release the agent's lock with a
            # failed marker naming the step and the reason.
            workflow.logger.error("activation %s failed: %s", activation_id, err.cause or err)
            marker = failed_marker(
                event.event_id,
                activation_failure(err)[:500],
                at=workflow.now(),
                activation_id=activation_id,
                conversation_id=data.conversation_id,
            )
            terminated = isinstance(err.cause, TerminatedError)
            if terminated and up_front.conversation_patched(data, termination.PATCH):
                # The operator's reason, so the waiting submitter learns why.
                marker = await termination.record(
                    marker, agent=data.agent, trigger=event.trigger, channel=data.channel
                )
            await release(data.agent, marker)
            return
        if result.reply is not None:
            self._remember(result.reply)
        # Background work started now belongs to this exchange (its cost and its trace).
        attribution.bind(activation=activation_id)
        await conversation_hooks.after_turn(data, self._state)
        self._guarding = await guardrail_hooks.start(data, turn, activation_id, result.reply)

    def _failed(self, turn: InboundTurn, reason: str) -> CompletionMarker:
        """The ``failed`` marker of an input that never reached an activation."""
        return failed_marker(
            turn.event.event_id,
            reason,
            at=workflow.now(),
            activation_id=turn.activation_id,
            conversation_id=self._input.conversation_id,
        )

    async def _abandon(self, reason: str) -> ConversationClosed:
        """End a conversation that could not be recorded: each input it holds fails, saying why."""
        data = self._input
        self._closing = True
        for turn in self._state.pending:
            await release(data.agent, self._failed(turn, reason))
        self._state.pending.clear()
        closed = ConversationClosed(
            conversation_id=data.conversation_id,
            channel_key=data.channel.key,
            closed_at=workflow.now(),
            reason=reason[:500],
        )
        await workflow.get_external_workflow_handle(names.agent_workflow_id(data.agent)).signal(
            names.CONVERSATION_CLOSED, closed
        )
        return closed

    async def _closed(self, *, reason: str) -> bool:
        """Record the close; ``False`` if a turn this conversation has not heard of came first.

        The agent writes an admitted turn before it tells the conversation, so the row in
        PostgreSQL decides (``store.queries.admission``). A refused close waits for the news
        on its way (at most until that turn's activation must have ended) and is tried again.
        """
        data = self._input
        self._closing = True
        self._close_reason, self._closed_at = reason, workflow.now()
        closing = CloseConversationInput(
            conversation_id=data.conversation_id,
            closed_at=self._closed_at,
            reason=reason,
            turns=self._state.turns,
            participants=self._state.participants,
            last_input=self._last_input(),
        )
        if not up_front.conversation_patched(self._input, PATCH_GUARDED_CLOSE):
            await workflow.execute_local_activity_method(
                StoreActivities.close_conversation,
                closing,
                **summarized_local(DATABASE, "record the close"),
            )
            return True
        closed: bool = await workflow.execute_local_activity_method(
            AdmissionActivities.close,
            closing,
            **summarized_local(DATABASE, "record the close"),
        )
        if closed:
            return True
        self._closing = False
        try:
            await workflow.wait_condition(
                self._news,
                timeout=EXCHANGE_LIMIT,
                timeout_summary="close refused: waiting for the turn the agent admitted",
            )
        except TimeoutError:
            workflow.logger.warning("no news of the turn that refused the close: closing again")
        return False

    def _last_input(self) -> str | None:
        """The newest person turn this conversation knows (older states: from the window)."""
        if self._state.last_input is not None:
            return self._state.last_input
        people = [t.turn_id for t in self._state.window if t.role is Role.PERSON]
        return people[-1] if people else None

    async def _end(self, data: ConversationInput) -> ConversationClosed:
        """Tell the agent the conversation closed, then settle what the close starts."""
        assert self._closed_at is not None
        self._idle_timer.stop()
        closed = ConversationClosed(
            conversation_id=data.conversation_id,
            channel_key=data.channel.key,
            closed_at=self._closed_at,
            reason=self._close_reason,
        )
        try:
            await workflow.get_external_workflow_handle(names.agent_workflow_id(data.agent)).signal(
                names.CONVERSATION_CLOSED, closed
            )
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the agent may be gone (deleted); closing still completes
            workflow.logger.warning("could not tell the agent the conversation closed: %s", err)
        await conversation_hooks.on_close(data, self._state)
        await guardrail_hooks.settle(self._input, self._guarding)
        return closed
