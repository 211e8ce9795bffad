"""``place_call``: the agent phones someone it knows through the voice transport (§4.6).

The transport dials once per tool call (``activities/voice/dialing.py``: a retried attempt
finds the call the first one placed); the call's workflow (``call/{call id}``) is started at
once, marked outbound with the person, so when they answer and the transport's first turn
arrives the web channel's voice endpoint tells the agent that it called them. Offered only
when a transport is configured (``PERSYN_VOICE__VAPI_*``).
"""

from __future__ import annotations

import contextlib

from pydantic import BaseModel, Field
from temporalio import activity
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from activities.tools.builtin.contact import one_contact
from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from activities.voice.dialing import DialIntent, Dialled, dial_once
from activities.voice.transport import CallTransport, TransportError, transport_from
from contract import names
from schemas.ids import new_ulid
from schemas.text import InvalidTextError, clean_text
from schemas.voice import CallDirection, StartCallInput
from store.queries.voice import phone_of


class PlaceCallInput(ToolInput):
    """Input of ``place_call``."""

    contact: str = Field(description="The person's name or ID.")
    first_message: str = Field(
        description="The first words you will say when they answer, exactly as spoken."
    )


class CallPlaced(BaseModel):
    """The call the transport is placing."""

    call_id: str
    contact: str
    status: str


class PlaceCall(Tool):
    """Phone someone the agent knows."""

    name = "place_call"
    description = (
        "Phone someone you know on their recorded number. The call rings now; when they "
        "answer you speak with them live, and the call is its own conversation."
    )
    input_model = PlaceCallInput
    output_model = CallPlaced
    # A dial and a lookup of the transport's calls, each up to DIAL_TIMEOUT_S, fit in one run.
    timeout_seconds = 45.0

    def __init__(self, deps: ToolDeps, transport: CallTransport, client: Client) -> None:
        self._deps = deps
        self._transport = transport
        self._client = client

    async def run(self, call: ToolRun, args: PlaceCallInput) -> CallPlaced:
        """Find the person's number, dial once, and open the call's session marked outbound."""
        agent = call.context.agent
        try:
            opening = clean_text(args.first_message, what="first_message", max_chars=500)
        except InvalidTextError as err:
            raise ToolError(str(err)) from None
        async with self._deps.db.session() as session:
            contact = await one_contact(session, agent=agent, who=args.contact)
            number = await phone_of(session, agent=agent, person_id=contact.person_id)
        if number is None:
            raise ToolError(f"you have no phone number for {contact.name}")
        intent = DialIntent(
            # The stored call's ID is the same in every attempt: the key of the one dial.
            key=call.call_id or new_ulid(),
            agent=agent,
            person_id=contact.person_id,
            number=number,
            first_message=opening,
        )
        try:
            dialled = await dial_once(self._deps.db, self._transport, intent)
        except TransportError as err:
            raise ToolError(str(err)) from None
        await self._open_session(agent, dialled, contact.name)
        placed = dialled.call
        return CallPlaced(call_id=placed.call_id, contact=contact.name, status=placed.status)

    async def _open_session(self, agent: str, dialled: Dialled, name: str) -> None:
        """Start the call's workflow marked outbound (a retry joins the one already started)."""
        start = StartCallInput(
            call_id=dialled.call.call_id,
            agent=agent,
            direction=CallDirection.OUTBOUND,
            tenant="",  # the web tenant is the token the transport's first turn carries
            person_id=dialled.person_id,
            person_name=name,
            number=dialled.number,
            idle_timeout_s=self._deps.settings.voice.idle_timeout_s,
        )
        # The session of a call answered, spoken and ended before this retry came stays ended.
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await self._client.start_workflow(
                names.CALL_WORKFLOW,
                start,
                id=names.call_workflow_id(dialled.call.call_id),
                search_attributes=names.search_attributes(agent=agent),
                static_summary=f"{agent}'s outbound call {dialled.call.call_id}",
                # The calling activity's queue, as deliveries do: the worker serving this agent.
                task_queue=(
                    activity.info().task_queue
                    if activity.in_activity()
                    else self._deps.settings.task_queue
                ),
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            )


def voice_tools(deps: ToolDeps) -> list[Tool]:
    """``place_call`` when a transport is configured and the worker has a client, else none."""
    transport = transport_from(deps.settings.voice)
    if transport is None or deps.client is None:
        return []
    return [PlaceCall(deps, transport, deps.client)]
