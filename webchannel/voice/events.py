"""``POST /voice/v1/agents/{handle}/events``: the transport says a call has ended.

A voice platform posts its server messages about a call to one URL (Vapi's "server URL"); of
those, only the end of a call matters here: its workflow is told (``hang_up``) and ends, the
process forgets the call, and a later turn with the same call ID is refused. Every other
message is acknowledged and ignored.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request

from contract import names
from schemas.voice import CallEvent, CallEventAnswer, HangUp
from usecases.tokens import TokenPublic
from usecases.voice import CallNotAnsweringError, call_state, tell_call
from webchannel.auth import integrator
from webchannel.body import parse, read_capped
from webchannel.models import Problem, inline_schema
from webchannel.routes import Handle, agent_for
from webchannel.state import WebState, web_state

router = APIRouter(tags=["voice"])
"""Included by the voice router (``/voice/v1``)."""

Token = Annotated[TokenPublic, Depends(integrator)]
State = Annotated[WebState, Depends(web_state)]

REFUSALS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": description}
    for status, description in {
        400: "A malformed body (not UTF-8, a NUL byte, not JSON) or agent handle.",
        401: "The bearer token is missing, unknown or revoked.",
        403: "The token is not for this agent.",
        404: "No such agent, or no such call of this agent and token running.",
        408: "The body did not arrive in time.",
        413: "The body is over the service's size cap.",
        422: "A field breaks a rule; the field is named.",
        500: "A bug in the service: retry, and report it if it persists.",
    }.items()
}


@router.post(
    "/agents/{handle}/events",
    response_model=CallEventAnswer,
    responses=REFUSALS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": inline_schema(CallEvent)}},
        }
    },
)
async def call_event(
    handle: Handle, request: Request, token: Token, state: State
) -> CallEventAnswer:
    """Take a transport's message about a call: its end ends the call; the rest is ignored."""
    handle = await agent_for(state, token, handle)
    raw = await read_capped(request, limit=state.max_body_bytes, timeout=state.body_timeout_s)
    event = parse(raw, CallEvent)
    reason = event.ends()
    call_id = event.message.call.id if event.message.call is not None else None
    if reason is None:
        return CallEventAnswer(call_id=call_id, detail=f"{event.message.type}: nothing to do")
    if call_id is None:
        raise HTTPException(422, "message.call.id: the call that ended is not named")
    try:
        running = await call_state(client=state.client, call_id=call_id)
    except CallNotAnsweringError as err:
        raise HTTPException(503, str(err)) from None
    if (
        running is None
        or running.call.agent != handle
        or running.call.tenant
        not in (
            "",
            token.tenant,
        )
    ):
        # Another tenant's call reads as an unknown one: not even its existence is told.
        raise HTTPException(404, f"no call {call_id} of agent {handle!r} is running")
    await tell_call(
        client=state.client, call_id=call_id, signal=names.HANG_UP, message=HangUp(reason=reason)
    )
    runtime = getattr(request.app.state, "voice", None)
    if runtime is not None:
        runtime.sessions.drop(call_id)
    return CallEventAnswer(call_id=call_id, ended=True, detail=f"call ended: {reason}")
