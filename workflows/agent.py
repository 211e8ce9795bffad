"""``AgentWorkflow``: an agent's inbox and lock.

Lifecycle: started as ``agent/{handle}`` when the agent is created (or by update-with-start on
first contact) and runs as long as the agent exists. A client's stimulus arrives as the
``submit`` update (which returns a receipt carrying the completion marker) or the
fire-and-forget ``deliver`` signal; heartbeats and reminders arrive as the internal ``impulse``
signal, which the agent turns into an event on its own channel (a client can set neither an
internal trigger nor a ``self:`` or ``agent:`` channel); another agent's message arrives as the
internal ``peer`` update, which the agent turns into an event on ``agent:<sender>``. Events
queue in arrival order and enter the critical section one at a time: the speaker is resolved to
a person, the event goes to the channel's open conversation (opening one if needed) with an
activation ID the agent chose, and the lock is held until that activation signals
``activation_finished`` (any other completion is dropped). Conversations report
``conversation_closed``; an event caught by a closing conversation is sent to a fresh one.
Duplicate event IDs get the same receipt and one reply; an ID reused for a different event is
refused. A live call holds the lock for its whole length (``call_began`` to ``call_ended``,
internal signals from its ``CallWorkflow``; ``workflows.call_hold``): once the event in flight
ends, only the call's own events are dispatched, one after another, and every other event
waits in the queue until the call ends or its hold lapses. Every handler validates its own
input (``workflows.handlers``), so no input can fail a workflow task. The workflow continues
as new, carrying its whole state (a call's hold included), when Temporal suggests it and every
handler has finished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError, ChildWorkflowError
from temporalio.workflow import ParentClosePolicy

from contract import attribution, names
from contract.policies import DATABASE, MESSAGE_STEP, MESSAGE_STEP_LIMIT, summarized_local
from schemas.activation import ActivationFinished, ActivationInput
from schemas.admission import Admission, AdmitInput
from schemas.agents import (
    AGENT_SHAPE,
    LOCK_BY_RUN_LIMIT_SHAPE,
    UP_FRONT_SHAPE,
    AgentState,
    AgentStatus,
    AgentStatusQuery,
    AgentWorkflowInput,
    InFlight,
    OpenConversation,
)
from schemas.autonomy import impulse_event
from schemas.conversation import (
    ConversationClosed,
    ConversationInput,
    ConversationState,
    InboundTurn,
    TurnTaken,
)
from schemas.events import (
    ChannelRef,
    CompletionMarker,
    ImpulseInput,
    InboundEvent,
    MarkerAnswer,
    MarkerQuery,
    Receipt,
    ReceiptStatus,
    SubmitEventInput,
    event_digest,
)
from schemas.ids import is_ulid, ulid_from_parts, ulid_time
from schemas.markers import failed_marker
from schemas.peers import AGENT_SERVICE, PeerMessageInput, peer_event
from schemas.pickup import PullOutboxInput, PullOutboxRequest, PullOutboxResult
from schemas.records import AgentLookupInput, AgentProfile, ResolveSpeakerInput
from schemas.runs import HISTORY_LIMIT
from schemas.voice import CallBegan, CallEnded
from workflows import admission, call_hold, handlers, inbox_metrics, run_length, up_front
from workflows.conversation import ConversationWorkflow
from workflows.inbox_views import client_refusal, id_conflict, in_flight_status, inbox_details
from workflows.steps import Progress, StepFailedError, bounded

with workflow.unsafe.imports_passed_through():
    from activities.channels.pickup import PickupActivities
    from activities.store import StoreActivities

ACTIVATION_DEADLINE = timedelta(minutes=20)
"""Longest the lock waits for one activation before recording it as failed, in runs recorded
before ``lock-bounded-by-run-limit``."""

PATCH_LOCK_BY_RUN_LIMIT = "lock-bounded-by-run-limit"
"""The lock waits for an admitted activation without a timer of its own: Temporal ends the
activation at ``ACTIVATION_RUN_LIMIT``, and its end releases the lock (with its result's marker
if its release signal never came). Runs recorded before started and cancelled a timer of
:data:`ACTIVATION_DEADLINE` for every event. Asked at the start of a run below shape 2."""

RESOLVE_STEP = "resolve the speaker"
"""The agent's own step on an event's path (``workflows.steps.bounded``)."""

PULL_STEP = "pull the outbox"
"""The ``pull_outbox`` update's store step, bounded like a message-path step."""

PULL_FAILED = "PullFailed"
"""``ApplicationError.type`` of a pull whose store step gave up (send the same pull again)."""

INBOX_HOLD_LIMIT = MESSAGE_STEP_LIMIT + ACTIVATION_DEADLINE
"""The longest one event can hold an agent's inbox, whatever the cause (22 minutes): its
admission step (bounded by ``MESSAGE_STEP_LIMIT``), then its activation, which Temporal ends at
``ACTIVATION_RUN_LIMIT`` (18 minutes); the activation's end, however it ends, releases the lock
(``_run_activation``). Runs recorded before ``lock-bounded-by-run-limit`` also gave up waiting
at :data:`ACTIVATION_DEADLINE`, with a ``failed`` marker."""

MAX_MARKERS = 2000

UNKNOWN_AGENT = "UnknownAgent"
"""``ApplicationError.type`` when the handle names no agent."""

EVENT_ID_CONFLICT = "EventIdConflict"
"""``ApplicationError.type`` when an event ID already names a different event."""

# Behaviour added to running agents; histories recorded before each replay the old path.
PATCH_CLIENT_TRIGGER = "client-trigger-refused"
PATCH_REFUSED = "refused-deliver-marker"
PATCH_COMPLETION_CHECK = "completion-in-flight-only"
PATCH_ACTIVATION_ID = "agent-names-activation"
PATCH_UNKNOWN_COMPLETES = "unknown-agent-completes"
PATCH_PEER_CHANNEL = "agent-channel-refused"
PATCH_CLOSED_WHILE_ROUTING = "closed-while-routing"
PATCH_FAILED_AFTER_RELEASE = "failed-after-release"
"""An activation that fails after releasing the lock no longer tells its conversation the
exchange failed: it already told it how the exchange ended."""
PATCH_UP_FRONT = "agent-patches-up-front"
"""The run asks every patch below before its first local activity (``workflows/up_front.py``)."""
ASKED_UP_FRONT = (
    PATCH_CLIENT_TRIGGER,
    PATCH_REFUSED,
    PATCH_COMPLETION_CHECK,
    PATCH_ACTIVATION_ID,
    PATCH_UNKNOWN_COMPLETES,
    PATCH_PEER_CHANNEL,
    PATCH_CLOSED_WHILE_ROUTING,
    PATCH_FAILED_AFTER_RELEASE,
    call_hold.PATCH,
    admission.PATCH,
    admission.PATCH_TURN_IN_EXCHANGE,
)
"""Every patch an agent's run asks, wherever it asks it (and ``run_length.asked``'s)."""


@workflow.defn(name=names.AGENT_WORKFLOW)
class AgentWorkflow:
    """Inbox, lock and conversation router for one agent."""

    @workflow.init
    def __init__(self, data: AgentWorkflowInput) -> None:
        self._state = data.state or AgentState(handle=data.handle)
        self._profile: AgentProfile | None = None
        # Whether the run knows every patch's answer: its predecessor passed them on (no
        # markers, nothing a query could move), or the run asked them up front
        # (``workflows/up_front.py``).
        self._up_front = data.shape >= UP_FRONT_SHAPE
        # Whether the lock relies on the activation's run limit alone (no timer per event).
        self._lock_by_run_limit = data.shape >= LOCK_BY_RUN_LIMIT_SHAPE
        # Conversation starts still running; each drops out when done (asyncio keeps only a
        # weak reference to a task, so one must be held until then).
        self._starting: set[asyncio.Task[None]] = set()
        # The activations this run started, each watched until it ends (``_run_activation``).
        self._watching: set[asyncio.Task[None]] = set()
        # The event being dispatched and the activation ID it was given: set before the event
        # is routed, so a completion that outruns the routing signal is still recognised.
        self._dispatching: tuple[str, str | None] | None = None
        # Conversations that said they closed, newest last: an event signalled to one while its
        # close was on the way was dropped by it, and is routed again (see ``_dispatch``). A
        # few suffice: only the conversation being signalled at that moment matters.
        self._closed: list[str] = []
        # Set once the run has loaded its agent (behind a patch): see ``_time_to_continue``.
        self._history_limit: int | None = None
        # The event taken from the queue, and the bounded step it is at (for ``status``).
        self._current: InboundEvent | None = None
        self._progress: Progress | None = None

    # -- messages -----------------------------------------------------------------------------
    # Every handler takes its payloads raw and validates them itself (workflows/handlers.py):
    # nothing a client sends can fail a workflow task. Public: submit, deliver, marker, status.
    # Internal (Persyn's own workflows and activities): impulse, activation_finished,
    # conversation_closed, call_began, call_ended.

    @workflow.update(
        name=names.SUBMIT,
        description="Submit an InboundEvent; waits and returns its Receipt with the completion "
        "marker (the event ID is the idempotency key).",
    )
    @handlers.guarded_update(SubmitEventInput)
    async def submit(self, data: SubmitEventInput) -> Receipt:
        """Queue an event and wait for its completion marker."""
        event_id = data.event.event_id
        # An update can arrive with update-with-start before the agent's record is loaded.
        await workflow.wait_condition(lambda: self._profile is not None)
        self._validate(data.event)
        self._enqueue(data.event)
        await workflow.wait_condition(lambda: event_id in self._state.markers)
        return self._receipt(event_id)

    @submit.validator
    @handlers.guarded_validator(SubmitEventInput, handler=names.SUBMIT)
    def _validate_submit(self, data: SubmitEventInput) -> None:
        self._validate(data.event)
        refusal = client_refusal(data.event)
        if refusal is not None:
            raise handlers.invalid(names.SUBMIT, refusal)
        conflict = id_conflict(self._state, data.event)
        if conflict is not None:
            raise ApplicationError(conflict, type=EVENT_ID_CONFLICT, non_retryable=True)

    def _refuse(self, payloads: Sequence[Any], reason: str) -> None:
        """A delivered event that does not validate: its marker says why, if it has an ID."""
        first = payloads[0] if len(payloads) == 1 else None
        event = first.get("event") if isinstance(first, dict) else None
        event_id = event.get("event_id") if isinstance(event, dict) else None
        if isinstance(event_id, str) and is_ulid(event_id) and self._patched(PATCH_REFUSED):
            self._refused(event_id, reason)

    @workflow.signal(
        name=names.DELIVER,
        description="Queue an InboundEvent without waiting; poll the marker query for its outcome.",
    )
    @handlers.guarded_signal(SubmitEventInput, on_invalid=_refuse)
    def deliver(self, data: SubmitEventInput) -> None:
        """Queue an event without waiting (integrators poll the ``marker`` query)."""
        event = data.event
        refusal = client_refusal(event)
        if (
            refusal is not None
            and event.channel.service == AGENT_SERVICE
            and not self._patched(PATCH_PEER_CHANNEL)
        ):
            refusal = None  # recorded before agent channels were reserved
        if refusal is not None and self._patched(PATCH_CLIENT_TRIGGER):
            self._refused(event.event_id, f"invalid deliver input: {refusal}")
            return
        conflict = id_conflict(self._state, event)
        if conflict is not None:
            workflow.logger.warning("dropped a deliver: %s", conflict)
            return
        self._enqueue(event)

    @workflow.update(
        name=names.PEER,
        description="Internal: another agent's message from its outbox, on agent:<sender>; "
        "returns the receipt (the message ID is the event ID).",
    )
    @handlers.guarded_update(PeerMessageInput)
    async def peer(self, data: PeerMessageInput) -> Receipt:
        """Internal: queue another agent's message as an event the agent builds itself."""
        event = peer_event(data)
        await workflow.wait_condition(lambda: self._profile is not None)
        self._validate(event)
        self._enqueue(event)
        await workflow.wait_condition(lambda: event.event_id in self._state.markers)
        return self._receipt(event.event_id)

    @peer.validator
    @handlers.guarded_validator(PeerMessageInput, handler=names.PEER)
    def _validate_peer(self, data: PeerMessageInput) -> None:
        event = peer_event(data)
        self._validate(event)
        if data.sender == self._state.handle:
            raise handlers.invalid(names.PEER, "sender: an agent does not message itself")
        conflict = id_conflict(self._state, event)
        if conflict is not None:
            raise ApplicationError(conflict, type=EVENT_ID_CONFLICT, non_retryable=True)

    @workflow.update(
        name=names.PULL_OUTBOX,
        description="Acknowledge messages received from an earlier pull (ack), then return up "
        "to limit messages the agent sent on its own to your service that are still kept for "
        "pickup; a message is returned until acknowledged, never after.",
    )
    @handlers.guarded_update(PullOutboxInput)
    async def pull_outbox(self, data: PullOutboxInput) -> PullOutboxResult:
        """Acknowledge, then take, the messages kept for an integrator's own service.

        The store step is a local activity bounded like a message-path step; it runs beside
        the inbox and holds no lock, so a pull never waits for a turn.
        """
        await workflow.wait_condition(lambda: self._profile is not None)
        if self._profile is not None and not self._profile.exists:
            raise ApplicationError(
                f"there is no agent {self._state.handle!r}: create it with `persyn agent create`",
                type=UNKNOWN_AGENT,
                non_retryable=True,
            )
        request = PullOutboxRequest(agent=self._state.handle, pull=data)
        try:
            return await bounded(
                lambda: workflow.execute_local_activity_method(
                    PickupActivities.pull_outbox,
                    request,
                    **summarized_local(MESSAGE_STEP, PULL_STEP),
                ),
                step=PULL_STEP,
                doing=f"outbox pull of agent {self._state.handle} for {data.service}",
            )
        except StepFailedError as err:
            raise ApplicationError(str(err), type=PULL_FAILED, non_retryable=True) from None

    @pull_outbox.validator
    @handlers.guarded_validator(PullOutboxInput, handler=names.PULL_OUTBOX)
    def _validate_pull_outbox(self, data: PullOutboxInput) -> None:
        # Decoding is the check (the reserved services are refused by the model): a refused
        # pull never reaches the agent's history.
        del data

    @workflow.signal(
        name=names.IMPULSE,
        description="Internal: a heartbeat or reminder firing, run on the agent's own channel.",
    )
    @handlers.guarded_signal(ImpulseInput)
    def impulse(self, data: ImpulseInput) -> None:
        """Internal: a heartbeat or reminder firing, run on the agent's own channel."""
        self._enqueue(impulse_event(data))

    @workflow.signal(
        name=names.ACTIVATION_FINISHED,
        description="Internal: an activation's completion marker; releases the agent's lock.",
    )
    @handlers.guarded_signal(ActivationFinished)
    def activation_finished(self, data: ActivationFinished) -> None:
        """Internal: the activation in flight left the critical section.

        Accepted once, and only for the event and activation in flight: anything else (a late
        or repeated completion, or one forged by another client) is dropped with a warning.
        """
        marker = data.marker
        problem = self._completion_problem(marker)
        if problem is not None and self._patched(PATCH_COMPLETION_CHECK):
            workflow.logger.warning(
                "dropped a completion for event %s: %s", marker.event_id, problem
            )
            return
        self._release(marker)

    @workflow.signal(
        name=names.CONVERSATION_CLOSED,
        description="Internal: a conversation closed when idle; its next input opens a new one.",
    )
    @handlers.guarded_signal(ConversationClosed)
    def conversation_closed(self, data: ConversationClosed) -> None:
        """Internal: a conversation closed; an event it never took goes to a fresh one."""
        self._closed = [*self._closed[-7:], data.conversation_id]
        current = self._state.open.get(data.channel_key)
        if current is not None and current.conversation_id == data.conversation_id:
            del self._state.open[data.channel_key]
        flight = self._state.in_flight
        if (
            flight is not None
            and not flight.admitted  # its turn is written and its activation runs on
            and flight.conversation_id == data.conversation_id
            and flight.event.event_id not in self._state.markers
        ):
            self._state.queue.insert(0, flight.event)
            self._state.in_flight = None

    @workflow.signal(
        name=names.CALL_BEGAN,
        description="Internal: a live call asks for the agent's lock, for its whole length.",
    )
    @handlers.guarded_signal(CallBegan)
    def call_began(self, data: CallBegan) -> None:
        """Internal: a call started; it takes the lock once the event in flight has ended."""
        if not self._patched(call_hold.PATCH):
            return
        free = self._current is None
        if call_hold.ask(self._state, data, now=workflow.now(), free=free):
            workflow.logger.info("call %s asked for the lock", data.call_id)
            self._show()

    @workflow.signal(
        name=names.CALL_ENDED,
        description="Internal: a live call ended and gives the agent's lock back.",
    )
    @handlers.guarded_signal(CallEnded)
    def call_ended(self, data: CallEnded) -> None:
        """Internal: a call ended; the events that waited for it are dispatched in order."""
        ended = call_hold.end(self._state, data.call_id)
        if ended is None:
            return  # never held, or its hold lapsed already
        workflow.logger.info("call %s gave the lock back: %s", data.call_id, data.reason)
        if self._current is None:
            call_hold.take(self._state, now=workflow.now())  # the next call waiting, if any
        self._show()

    @workflow.query(
        name=names.MARKER,
        description="How an event ended (its completion marker), or whether it is still pending.",
    )
    @handlers.guarded_query(MarkerQuery)
    def marker(self, data: MarkerQuery) -> MarkerAnswer:
        """The completion marker of an event, or whether it is still pending."""
        found = self._state.markers.get(data.event_id) or self._state.refused.get(data.event_id)
        pending = found is None and self._known(data.event_id)
        return MarkerAnswer(marker=found, pending=pending)

    @workflow.query(
        name=names.STATUS,
        description="Queue length, the event being answered, open conversations, events handled.",
    )
    @handlers.guarded_query(AgentStatusQuery, optional=True)
    def status(self, _: AgentStatusQuery) -> AgentStatus:
        """Queue length, the event in the critical section and open conversations."""
        flight = self._state.in_flight
        received = self._state.received.values()
        calls = self._state.calls
        return AgentStatus(
            handle=self._state.handle,
            queued=len(self._state.queue),
            in_flight_event=flight.event.event_id if flight else None,
            open_conversations=list(self._state.open.values()),
            handled=self._state.handled,
            starting_conversations=len(self._starting),
            in_flight=in_flight_status(self._state, self._current, self._progress),
            oldest_waiting_since=min(received) if received else None,
            call=calls[0] if calls else None,
            calls_waiting=max(len(calls) - 1, 0),
        )

    # -- helpers ------------------------------------------------------------------------------

    def _validate(self, event: InboundEvent) -> None:
        if self._profile is not None and not self._profile.exists:
            raise ApplicationError(
                f"there is no agent {self._state.handle!r}: create it with `persyn agent create`",
                type=UNKNOWN_AGENT,
                non_retryable=True,
            )

    def _refused(self, event_id: str, reason: str) -> None:
        if event_id in self._state.markers or self._known(event_id):
            return  # the ID already names a valid event: leave its marker alone
        self._state.refused[event_id] = failed_marker(event_id, reason[:1000], at=workflow.now())

    def _completion_problem(self, marker: CompletionMarker) -> str | None:
        """Why a completion is not the one the agent waits for (``None`` when it is)."""
        if marker.event_id in self._state.markers:
            return "the event is already complete"
        expected = self._dispatching
        if expected is None or expected[0] != marker.event_id:
            return "no activation for this event is in flight"
        if expected[1] is not None and marker.activation_id != expected[1]:
            return f"it names activation {marker.activation_id}, not the one in flight"
        flight = self._state.in_flight
        if (
            expected[1] is None
            and flight is not None
            and marker.conversation_id != flight.conversation_id
        ):
            return "it names another conversation"
        return None

    def _known(self, event_id: str) -> bool:
        """Whether the event is waiting: queued, taken from the queue, or in its activation.

        Taken from the queue counts: while its speaker is resolved the event is in neither the
        queue nor ``in_flight``, and a ``marker`` query then must not read as "never arrived".
        """
        flight = self._state.in_flight
        current = self._current
        return (
            (current is not None and current.event_id == event_id)
            or (flight is not None and flight.event.event_id == event_id)
            or any(e.event_id == event_id for e in self._state.queue)
        )

    def _enqueue(self, event: InboundEvent) -> None:
        if event.event_id in self._state.markers or self._known(event.event_id):
            return  # a duplicate: the first submission's marker answers it
        self._state.refused.pop(event.event_id, None)
        self._state.digests[event.event_id] = event_digest(event)
        self._state.received[event.event_id] = workflow.now()
        self._state.queue.append(event)
        call_hold.heard(self._state, event.channel, now=workflow.now())
        self._publish_waiting()

    def _receipt(self, event_id: str) -> Receipt:
        return Receipt(
            event_id=event_id,
            agent=self._state.handle,
            status=ReceiptStatus.COMPLETED,
            marker=self._state.markers[event_id],
        )

    def _release(self, marker: CompletionMarker) -> None:
        """Record how the event in the critical section ended.

        The one way every outcome releases the lock (the dispatch waits for the marker) and
        answers a waiting ``submit``.
        """
        self._state.markers[marker.event_id] = marker
        self._state.received.pop(marker.event_id, None)

    def _publish_waiting(self) -> None:
        received = self._state.received.values()
        inbox_metrics.oldest_waiting(self._state.handle, min(received) if received else None)

    def _fail(self, event: InboundEvent, reason: str, conversation: str | None = None) -> None:
        """Release the lock with a ``failed`` marker for an event no activation answered."""
        self._release(
            failed_marker(event.event_id, reason, at=workflow.now(), conversation_id=conversation)
        )

    def _expire_markers(self) -> None:
        now = workflow.now()
        expired = [key for key, m in self._state.markers.items() if m.expires_at <= now]
        for key in expired:
            del self._state.markers[key]
        while len(self._state.markers) > MAX_MARKERS:
            del self._state.markers[next(iter(self._state.markers))]
        for key in [k for k, m in self._state.refused.items() if m.expires_at <= now]:
            del self._state.refused[key]
        for key in [k for k in self._state.digests if k not in self._state.markers]:
            if not self._known(key):
                del self._state.digests[key]
        for key in [k for k in self._state.received if not self._known(k)]:
            del self._state.received[key]

    def _time_to_continue(self, data: AgentWorkflowInput) -> bool:
        if workflow.info().is_continue_as_new_suggested():
            return True
        # A worker that starts replays every open agent's whole history before serving it, so
        # the history's length, not Temporal's suggestion at thousands of events, bounds how
        # soon the agents answer after a worker restart (bench/replay_cost.py).
        if (
            self._history_limit is not None
            and workflow.info().get_current_history_length() >= self._history_limit
        ):
            return True
        limit = data.continue_as_new_after
        return limit is not None and self._state.since_continued >= limit

    def _patched(self, patch: str) -> bool:
        """``workflow.patched``, answered without asking in a run that knows every answer."""
        return self._up_front or workflow.patched(patch)

    def _new_id(self, event: InboundEvent | None = None) -> str:
        """A fresh ULID; for an event, stamped with the event's own time.

        A run that asked its patches up front stamps an event's IDs with the event ID's time,
        which its history fixes. ``workflow.now()`` is the time of whichever task the worker
        runs the code in, and a query during a local activity can move that code, and even
        the update handler that queued the event, to another task live than on replay
        (``workflows/up_front.py``): a child named from it would not match its history.
        """
        at = workflow.now()
        if event is not None and self._up_front:
            at = ulid_time(event.event_id)
        return ulid_from_parts(at, workflow.random().getrandbits(80))

    # -- the critical section -----------------------------------------------------------------

    def _not_open(self, event: InboundEvent, current: OpenConversation | None) -> bool:
        """Fail an event that names a conversation not open on its channel; whether it did."""
        if event.conversation_id is None or (
            current is not None and current.conversation_id == event.conversation_id
        ):
            return False
        self._fail(
            event,
            f"conversation {event.conversation_id} is not open on {event.channel.key}: "
            "omit conversation_id to start a new one",
        )
        return True

    async def _route(self, turn: InboundTurn) -> str | None:
        """Hand the turn to its conversation; returns the conversation ID, or ``None``."""
        event = turn.event
        key = event.channel.key
        current = self._state.open.get(key)
        if self._not_open(event, current):
            return None
        if current is not None:
            try:
                await workflow.get_external_workflow_handle(
                    names.conversation_workflow_id(current.conversation_id)
                ).signal(names.INBOUND, turn)
                return current.conversation_id
            except asyncio.CancelledError:
                raise
            except Exception:
                # It closed before hearing of this input: open a fresh one below.
                self._state.open.pop(key, None)
        conversation_id = self._new_id()
        self._state.open[key] = OpenConversation(
            conversation_id=conversation_id, channel_key=key, opened_at=workflow.now()
        )
        # Started in the background: the lock waits for the activation, not for the start.
        self._background(self._start_conversation(turn, conversation_id), self._starting)
        return conversation_id

    async def _open_conversation(
        self,
        conversation_id: str,
        channel: ChannelRef,
        *,
        first: InboundTurn | None = None,
        state: ConversationState | None = None,
    ) -> None:
        """Start ``conversation/{conversation_id}`` as this agent's child (abandoned)."""
        assert self._profile is not None
        await workflow.start_child_workflow(
            ConversationWorkflow.run,
            ConversationInput(
                conversation_id=conversation_id,
                agent=self._state.handle,
                agent_name=self._profile.name,
                channel=channel,
                idle_seconds=self._profile.idle_minutes * 60,
                first=first,
                state=state,
                # The agent's own limit goes down to its conversations (tests lower it).
                history_limit=self._history_limit or HISTORY_LIMIT,
            ),
            id=names.conversation_workflow_id(conversation_id),
            parent_close_policy=ParentClosePolicy.ABANDON,
            search_attributes=names.search_attributes(
                agent=self._state.handle, channel=channel.key, conversation=conversation_id
            ),
            static_summary=f"{self._state.handle} talking on {channel.key}",
        )

    async def _start_conversation(self, turn: InboundTurn, conversation_id: str) -> None:
        event, key = turn.event, turn.event.channel.key
        try:
            await self._open_conversation(conversation_id, event.channel, first=turn)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            workflow.logger.error("conversation %s did not start: %s", conversation_id, err)
            self._state.open.pop(key, None)
            self._fail(event, f"could not open a conversation: {err}", conversation_id)

    async def _process(self, event: InboundEvent) -> None:
        self._current = event
        try:
            await self._dispatch(event)
        finally:
            self._dispatching = None
            self._current = None
            # A call's turn that ended is a sign of the call; a call that asked meanwhile
            # takes the lock now that the inbox is free.
            call_hold.heard(self._state, event.channel, now=workflow.now())
            call_hold.take(self._state, now=workflow.now())
            self._publish_waiting()

    def _report(self, progress: Progress | None) -> None:
        self._progress = progress

    async def _dispatch(self, event: InboundEvent) -> None:
        if self._patched(admission.PATCH):
            await self._admit(event)
            return
        speaker = ResolveSpeakerInput(
            agent=self._state.handle,
            channel=event.channel,
            speaker=event.speaker,
            seen_at=workflow.now(),
        )
        try:
            resolved = await bounded(
                lambda: workflow.execute_local_activity_method(
                    StoreActivities.resolve_speaker,
                    speaker,
                    **summarized_local(MESSAGE_STEP, RESOLVE_STEP),
                ),
                step=RESOLVE_STEP,
                doing=f"inbox of agent {self._state.handle}, event {event.event_id}",
                report=self._report,
            )
        except StepFailedError as err:
            # The event ends here, saying why; the events behind it are not held.
            self._fail(event, str(err))
            return
        # The agent names the activation, so it can tell its completion from any other.
        activation_id = self._new_id() if self._patched(PATCH_ACTIVATION_ID) else None
        self._dispatching = (event.event_id, activation_id)
        turn = InboundTurn(
            event=event,
            person_id=resolved.person_id,
            person_name=resolved.person_name,
            activation_id=activation_id,
        )
        conversation_id = await self._route(turn)
        if conversation_id is None:
            return
        if (
            conversation_id in self._closed
            and event.event_id not in self._state.markers
            and self._patched(PATCH_CLOSED_WHILE_ROUTING)
        ):
            # Its close crossed our signal: the conversation ignored the input, so it goes to a
            # fresh conversation, first in line, as if it had been caught closing.
            self._state.queue.insert(0, event)
            return
        self._state.in_flight = InFlight(
            event=event,
            conversation_id=conversation_id,
            dispatched_at=workflow.now(),
            activation_id=activation_id,
        )
        event_id = event.event_id
        try:
            await workflow.wait_condition(
                lambda: event_id in self._state.markers or self._state.in_flight is None,
                timeout=ACTIVATION_DEADLINE,
                timeout_summary="activation deadline: past it the turn is recorded as failed",
            )
        except TimeoutError:
            self._fail(event, "the activation did not finish in time", conversation_id)
        if self._state.in_flight is None:
            return  # its conversation closed first: the event was queued again
        self._state.in_flight = None
        self._state.handled += 1
        self._state.since_continued += 1

    async def _admit(self, event: InboundEvent) -> None:
        """Admit the event (one step), then start its activation and wait for its marker."""
        assert self._profile is not None
        key, activation_id = event.channel.key, self._new_id(event)
        # The agent names the activation, so it can tell its completion from any other.
        self._dispatching = (event.event_id, activation_id)
        while True:
            current = self._state.open.get(key)
            if self._not_open(event, current):
                return
            request = AdmitInput(
                agent=self._state.handle,
                event=event,
                conversation_id=self._new_id(event) if current is None else current.conversation_id,
                opening=current is None,
                activation_id=activation_id,
                at=workflow.now(),
            )
            try:
                admitted = await admission.admit(request, report=self._report)
            except StepFailedError as err:
                # The event ends here, saying why; the events behind it are not held.
                self._fail(event, str(err))
                return
            if admitted.admission is Admission.ADMITTED:
                break
            # Its conversation closed before the turn reached it: the turn goes to a fresh one.
            self._state.open.pop(key, None)
        assert admitted.turn is not None and admitted.person_id is not None
        # Normally the one asked for; after a task that never completed, the one it admitted to.
        conversation_id = admitted.conversation_id or request.conversation_id
        taken = TurnTaken(
            inbound=InboundTurn(
                event=event,
                person_id=admitted.person_id,
                person_name=admitted.person_name,
                activation_id=activation_id,
            ),
            turn=admitted.turn,
        )
        if request.opening:
            self._state.open[key] = OpenConversation(
                conversation_id=conversation_id, channel_key=key, opened_at=workflow.now()
            )
        # A new conversation starts with the turn in its state, beside the activation (both go
        # out with this workflow task). An open one hears of it with the exchange's end, from
        # the activation; runs recorded before signalled it the turn here.
        told_later = not request.opening and self._patched(admission.PATCH_TURN_IN_EXCHANGE)
        if not told_later:
            self._background(
                self._tell_conversation(taken, opening=request.opening), self._starting
            )
        activation = admission.activation_input(
            request, admitted, agent_name=self._profile.name, with_turn=told_later
        )
        self._state.in_flight = InFlight(
            event=event,
            conversation_id=conversation_id,
            dispatched_at=workflow.now(),
            activation_id=activation_id,
            admitted=True,
        )
        self._background(self._run_activation(activation), self._watching)
        event_id = event.event_id

        def ended() -> bool:
            return event_id in self._state.markers

        if self._lock_by_run_limit:
            # Bounded by the activation's run limit: however it ends, its end releases.
            await workflow.wait_condition(ended)
        else:
            try:
                await workflow.wait_condition(
                    ended,
                    timeout=ACTIVATION_DEADLINE,
                    timeout_summary="activation deadline: past it the turn is recorded as failed",
                )
            except TimeoutError:
                self._fail(event, "the activation did not finish in time", conversation_id)
                await admission.tell_conversation_failed(activation)
        self._state.in_flight = None
        self._state.handled += 1
        self._state.since_continued += 1

    @staticmethod
    def _background(work: Coroutine[Any, Any, None], held: set[asyncio.Task[None]]) -> None:
        """Run ``work`` beside the critical section, ``held`` until done.

        asyncio keeps only a weak reference to a task, so it must be held until then.
        """
        task = asyncio.create_task(work)
        held.add(task)
        task.add_done_callback(held.discard)

    async def _tell_conversation(self, taken: TurnTaken, *, opening: bool) -> None:
        """Start the conversation with its first turn, or signal it the turn."""
        conversation_id = taken.turn.conversation_id
        if not opening:
            try:
                await workflow.get_external_workflow_handle(
                    names.conversation_workflow_id(conversation_id)
                ).signal(names.TURN_TAKEN, taken)
            except Exception as err:
                workflow.logger.warning("conversation %s not told: %s", conversation_id, err)
            return
        channel = taken.inbound.event.channel
        key = channel.key
        try:
            state = ConversationState(opened=True, taken=[taken])
            await self._open_conversation(conversation_id, channel, state=state)
        except Exception as err:
            workflow.logger.error("conversation %s did not start: %s", conversation_id, err)
            current = self._state.open.get(key)
            if current is not None and current.conversation_id == conversation_id:
                del self._state.open[key]

    def _released(self, activation: ActivationInput) -> bool:
        """Whether ``activation`` already ended its event (its marker is recorded)."""
        marker = self._state.markers.get(activation.event.event_id)
        return marker is not None and marker.activation_id == activation.activation_id

    def _holding(self, activation: ActivationInput) -> bool:
        """Whether ``activation``'s event holds the lock, not yet ended."""
        event_id = activation.event.event_id
        return self._dispatching == (event_id, activation.activation_id) and (
            event_id not in self._state.markers
        )

    async def _run_activation(self, activation: ActivationInput) -> None:
        """Start the activation; if it fails or is terminated, end its event saying why."""
        event_id = activation.event.event_id
        try:
            handle = await admission.start_activation(activation)
            result = await handle
        except ChildWorkflowError as err:
            marker = await admission.failure_marker(err, activation)
        except Exception as err:
            marker = failed_marker(
                event_id,
                f"could not start the activation: {err}"[:500],
                at=workflow.now(),
                activation_id=activation.activation_id,
                conversation_id=activation.conversation_id,
            )
        else:
            if self._lock_by_run_limit and self._holding(activation):
                # It ended, yet its release never came (its signal failed): no timer would
                # free the lock, so its own marker does.
                workflow.logger.warning(
                    "activation %s ended without releasing: released with its marker",
                    activation.activation_id,
                )
                self._release(result.marker)
            return
        if self._released(activation) and self._patched(PATCH_FAILED_AFTER_RELEASE):
            # Its event ended when it released the lock; what failed was its work afterwards
            # (the deferred deliberation, the emotion reading), and its conversation heard.
            workflow.logger.warning(
                "activation %s failed after its reply: %s", activation.activation_id, marker.reason
            )
            return
        workflow.logger.error("activation %s failed: %s", activation.activation_id, marker.reason)
        if self._holding(activation):
            self._release(marker)
        await admission.tell_conversation_failed(activation)

    @workflow.run
    async def run(self, data: AgentWorkflowInput) -> None:
        """Serve the inbox forever."""
        if not self._up_front:
            self._up_front = up_front.ask(
                PATCH_UP_FRONT, (*ASKED_UP_FRONT, *run_length.asked(data))
            )
        # Asked here, before any local activity, by a run whose shape does not answer it.
        if not self._lock_by_run_limit:
            self._lock_by_run_limit = workflow.patched(PATCH_LOCK_BY_RUN_LIMIT)
        attribution.bind(agent=data.handle)
        workflow.upsert_search_attributes([names.AGENT.value_set(data.handle)])
        profile: AgentProfile = await workflow.execute_local_activity_method(
            StoreActivities.lookup_agent,
            AgentLookupInput(handle=data.handle),
            **summarized_local(DATABASE, "load the agent"),
        )
        self._profile = profile
        if not profile.exists:
            # Let waiting updates fail with the clear message before the run ends. The run
            # itself completes: it did what it could, and a FAILED run would sit in the Web UI
            # as if something had broken.
            await workflow.wait_condition(workflow.all_handlers_finished)
            if self._patched(PATCH_UNKNOWN_COMPLETES):
                workflow.set_current_details(f"there is no agent {data.handle!r}")
                return
            raise ApplicationError(
                f"there is no agent {data.handle!r}: create it with `persyn agent create`",
                type=UNKNOWN_AGENT,
                non_retryable=True,
            )
        self._history_limit = (
            data.history_limit if self._up_front else run_length.history_limit(data)
        )
        # Without a call's hold (every run recorded before it) the waits below have no timeout
        # and the next event is the first queued, as before.
        while True:
            self._settle_calls()
            self._show()
            if not await self._wait_for(lambda: self._ready() or self._time_to_continue(data)):
                continue  # a held call's deadline came or moved: settled at the top
            index = call_hold.next_index(self._state)
            if index is not None:
                await self._process(self._state.queue.pop(index))
                self._expire_markers()
                continue
            if self._lapse_due():
                continue
            if not await self._wait_for(lambda: workflow.all_handlers_finished() or self._ready()):
                continue
            if not self._ready():
                self._state.since_continued = 0
                workflow.continue_as_new(
                    data.model_copy(update={"state": self._state, "shape": AGENT_SHAPE})
                )

    async def _wait_for(self, condition: Callable[[], bool]) -> bool:
        """Wait for ``condition``; ``False`` when a held call's deadline came or moved first.

        Without a call's hold there is no deadline: the wait has no timeout, as before holds.
        """
        armed = self._hold_deadline()
        try:
            await workflow.wait_condition(
                lambda: condition() or self._hold_deadline() != armed,
                timeout=call_hold.wait_limit(self._state, now=workflow.now()),
                timeout_summary="a silent call's hold lapses",
            )
        except TimeoutError:
            return False
        return self._hold_deadline() == armed

    def _hold_deadline(self) -> datetime | None:
        hold = call_hold.holder(self._state)
        return None if hold is None else call_hold.deadline(hold)

    def _ready(self) -> bool:
        """Whether an event may be dispatched now, or a silent call's hold is due to lapse."""
        return call_hold.next_index(self._state) is not None or self._lapse_due()

    def _lapse_due(self) -> bool:
        hold = call_hold.holder(self._state)
        return hold is not None and call_hold.deadline(hold) <= workflow.now()

    def _settle_calls(self) -> None:
        """Between events: end a silent call's hold, and let a waiting call take the lock."""
        lapsed = call_hold.settle(self._state, now=workflow.now())
        if lapsed is not None:
            workflow.logger.warning(
                "call %s lost the lock: nothing of it reached the inbox since %s",
                lapsed.call.call_id,
                lapsed.heard_at.isoformat(),
            )

    def _show(self) -> None:
        """The run's current details (the Web UI's, and ``persyn status``'s through it)."""
        # Continue-as-new cannot carry the start's summary (SDK 1.35): the details name the run.
        workflow.set_current_details(inbox_details(self._state))
        hold = call_hold.holder(self._state)
        inbox_metrics.on_call(self._state.handle, hold.since if hold is not None else None)
