"""Live calls from a client: who may call, the call's workflow, its background runs, its turns.

A call has a channel of its own on the web service (``web:<tenant>:call-<call id>``), so its
first turn opens a fresh conversation through the unchanged pipeline and every later turn
continues it: each call is its own episode. The caller is the person the agent already knows
by that number (their identity is attached to the call's channel before the first turn), or
a number on the allow-list. The words the agent speaks are written as its dialog turns in
the same conversation, so consolidation reads a call like any typed exchange.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from contract import names
from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef, CompletionMarker, Speaker
from schemas.ids import new_ulid
from schemas.settings import Settings
from schemas.voice import CallDirection, CallState, CallStateQuery, StartCallInput
from store.db import Database
from store.queries import voice as queries
from temporal import inbox
from usecases import submission
from usecases.errors import UseCaseError
from usecases.presence import WorkerPresence

log = logging.getLogger(__name__)

QUERY_TIMEOUT = timedelta(seconds=5)
"""How long a call's workflow has to answer its state (its worker may be down)."""


class CallNotAnsweringError(UseCaseError):
    """A call's workflow does not answer: no worker serves it, or the server is away."""

    def __init__(self, call_id: str) -> None:
        super().__init__(
            f"call {call_id} does not answer: no worker serves it (`persyn status` says why)"
        )


class CallRefusedError(Exception):
    """An inbound call from someone the agent does not know; the message says what to do."""


class CallEndedError(Exception):
    """A turn for a call that has already ended (hung up, or idle too long)."""


@dataclass(frozen=True)
class Caller:
    """Who is on the line: the known person, or an allow-listed number not met yet."""

    number: str
    person_id: str | None
    name: str | None


async def screen_caller(
    *, db: Database, settings: Settings, agent: str, number: str | None, channel: ChannelRef
) -> Caller:
    """The caller of an inbound call, if the agent takes calls from them.

    A known person (a speaker ID or a recorded address equal to ``number``) is attached to
    the call's channel, so admission finds them there; an allow-listed number is met as a
    new person by admission.

    Raises:
        CallRefusedError: No number, or a number neither known nor allowed.
    """
    if not number:
        raise CallRefusedError(
            "the call carries no caller number (call.customer.number or metadata.caller): "
            "inbound calls are taken only from known people"
        )
    async with db.autocommit() as session:
        known = await queries.known_number(session, agent=agent, number=number)
    if known is not None:
        person_id, name = known
        async with db.session() as session:
            await queries.attach_call_identity(
                session,
                agent=agent,
                person_id=person_id,
                channel=channel,
                speaker_id=number,
                at=datetime.now(UTC),
            )
        return Caller(number=number, person_id=person_id, name=name)
    if number in settings.voice.allow:
        return Caller(number=number, person_id=None, name=None)
    raise CallRefusedError(
        f"agent {agent!r} takes calls only from people it knows or allowed numbers, and "
        f"{number} is neither: add it to PERSYN_VOICE__ALLOW or to a contact's addresses"
    )


async def open_call(*, client: Client, settings: Settings, start: StartCallInput) -> CallState:
    """The call's session: started with ``start`` if new, else the one running.

    The agent's inbox is started first when it is not running (an agent whose first contact is
    this call): the call's workflow asks it for the lock as it starts.

    Raises:
        CallEndedError: The call has already ended (its ID is never reused).
    """
    await inbox.start_agent(client, handle=start.agent, task_queue=settings.task_queue)
    workflow_id = names.call_workflow_id(start.call_id)
    try:
        handle = await client.start_workflow(
            names.CALL_WORKFLOW,
            start,
            id=workflow_id,
            task_queue=settings.task_queue,
            # By its agent: an operator finds it, and deleting the agent ends it.
            search_attributes=names.search_attributes(agent=start.agent),
            static_summary=f"{start.agent}'s {start.direction.value} call {start.call_id}",
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        )
    except WorkflowAlreadyStartedError:
        raise CallEndedError(f"call {start.call_id} has ended: start a new call") from None
    state: CallState = await handle.query(names.CALL_STATE, CallStateQuery(), result_type=CallState)
    if state.ended is not None:
        raise CallEndedError(f"call {start.call_id} has ended ({state.ended}): start a new call")
    return state


async def call_state(
    *, client: Client, call_id: str, timeout: timedelta = QUERY_TIMEOUT
) -> CallState | None:
    """The state of a running call, or ``None`` when there is none (never placed, or ended).

    A call that ended, failed or was terminated is ``None`` too: only a running one is on.

    Raises:
        CallNotAnsweringError: The server or the call's worker did not answer in ``timeout``.
    """
    handle = client.get_workflow_handle(names.call_workflow_id(call_id))
    try:
        described = await handle.describe(rpc_timeout=timeout)
        if described.status is not WorkflowExecutionStatus.RUNNING:
            return None
        state: CallState = await handle.query(
            names.CALL_STATE, CallStateQuery(), result_type=CallState, rpc_timeout=timeout
        )
    except RPCError as err:
        # Gone between the two calls, or closed as the query ran: no call is on.
        if err.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION):
            return None
        if err.status is RPCStatusCode.DEADLINE_EXCEEDED:
            raise CallNotAnsweringError(call_id) from None
        raise
    return state


async def tell_call(*, client: Client, call_id: str, signal: str, message: object) -> None:
    """Send ``message`` to the call's workflow; a call already gone is logged, not an error."""
    try:
        await client.get_workflow_handle(names.call_workflow_id(call_id)).signal(signal, message)
    except RPCError as err:
        log.info("call %s not told %s: %s", call_id, signal, err.message)


async def run_background(
    *,
    client: Client,
    settings: Settings,
    presence: WorkerPresence,
    agent: str,
    channel: ChannelRef,
    speaker: Speaker,
    text: str,
) -> CompletionMarker | None:
    """One settled turn through the full pipeline, under a fresh event (and activation) ID.

    Admission writes the caller's turn into the call's conversation (opening it on the first
    turn); the activation's reply is the background conclusion. Waits while no worker serves:
    the turn is submitted when one returns, so a worker killed mid-call loses nothing.
    """
    event = submission.build_event(channel=channel, speaker=speaker, text=text)
    receipt = await submission.submit(
        client=client,
        settings=settings,
        presence=presence,
        handle=agent,
        event=event,
        on_no_worker=lambda line: log.warning("call turn %s waits: %s", event.event_id, line),
    )
    return receipt.marker


async def record_spoken(
    *,
    db: Database,
    agent: str,
    agent_name: str,
    channel: ChannelRef,
    conversation_id: str,
    text: str,
    turn_id: str | None = None,
) -> bool:
    """Write the words the agent spoke as its turn in the call's conversation (once)."""
    turn = DialogTurn(
        turn_id=turn_id or new_ulid(),
        conversation_id=conversation_id,
        role=Role.AGENT,
        speaker_id=agent,
        speaker_name=agent_name,
        text=text,
        at=datetime.now(UTC),
    )
    async with db.session() as session:
        return await queries.record_spoken(session, agent=agent, channel=channel, turn=turn)


async def conclusions(*, db: Database, activation_ids: list[str]) -> list[str]:
    """The replies of background runs (their outbox rows), in the order given."""
    if not activation_ids:
        return []
    async with db.autocommit() as session:
        return await queries.replies_of(session, activation_ids=activation_ids)


async def pipeline_prompt(*, db: Database, activation_id: str) -> str | None:
    """The system prompt the pipeline assembled for one of the call's background runs."""
    async with db.autocommit() as session:
        return await queries.prompt_of(session, activation_id=activation_id)


async def persona(*, db: Database, agent: str) -> tuple[str, str] | None:
    """The agent's name and seed persona (the first turn's prompt, before any is assembled)."""
    async with db.autocommit() as session:
        return await queries.persona_of(session, agent=agent)


def direction_cue(direction: CallDirection, agent_name: str, person: str) -> str:
    """The line that makes plain who dialled whom, naming both parties."""
    if direction is CallDirection.OUTBOUND:
        return f"{agent_name} called {person} on the phone, and {person} just answered."
    return f"{agent_name} picked up a phone call from {person}."
