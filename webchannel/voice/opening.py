"""A call's session opened on its first turn: the caller screened, the call's workflow started.

Later turns find it cached; a process that restarted rebuilds it from the call's workflow.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import HTTPException

from schemas.events import ChannelRef
from schemas.voice import CallCompletionRequest, CallDirection, StartCallInput, call_channel
from store.queries.voice import attach_call_identity
from usecases.tokens import TokenPublic
from usecases.voice import (
    CallEndedError,
    CallNotAnsweringError,
    CallRefusedError,
    call_state,
    conclusions,
    open_call,
    persona,
    screen_caller,
)
from webchannel.state import WebState
from webchannel.voice.runtime import VoiceRuntime
from webchannel.voice.session import CallSession


async def open_session(
    runtime: VoiceRuntime,
    state: WebState,
    token: TokenPublic,
    handle: str,
    call_id: str,
    body: CallCompletionRequest,
) -> CallSession:
    """The call's cached session; on its first turn, the caller screened and the call opened."""
    async with runtime.sessions.opening:
        session = runtime.sessions.get(call_id)
        if session is not None:
            if session.agent != handle or session.tenant != token.tenant:
                raise HTTPException(409, f"call {call_id} belongs to another agent or token")
            return session
        channel = call_channel(token.tenant, call_id)
        db = runtime.deps.db
        try:
            running = await call_state(client=state.client, call_id=call_id)
            if running is not None and (
                running.call.agent != handle or running.call.tenant not in ("", token.tenant)
            ):
                raise HTTPException(409, f"call {call_id} belongs to another agent or token")
            if running is not None and running.call.person_id is not None and running.call.number:
                # The agent dialled a known person: they are that person on this call's channel.
                start = running.call
                await _attach(runtime, handle, running.call.person_id, channel, running.call.number)
                person_name = start.person_name
                number, direction = running.call.number, start.direction
            else:
                caller = await screen_caller(
                    db=db,
                    settings=state.settings,
                    agent=handle,
                    number=body.caller(),
                    channel=channel,
                )
                person_name, number = caller.name, caller.number
                direction = body.direction() or CallDirection.INBOUND
                start = StartCallInput(
                    call_id=call_id,
                    agent=handle,
                    direction=direction,
                    tenant=token.tenant,
                    person_id=caller.person_id,
                    person_name=person_name,
                    number=number,
                    idle_timeout_s=state.settings.voice.idle_timeout_s,
                )
            opened = await open_call(client=state.client, settings=state.settings, start=start)
        except CallRefusedError as err:
            raise HTTPException(403, str(err)) from None
        except CallEndedError as err:
            raise HTTPException(409, str(err)) from None
        except CallNotAnsweringError as err:
            raise HTTPException(503, str(err)) from None
        agent = await persona(db=db, agent=handle)
        name, seed = agent if agent is not None else (handle, "")
        session = CallSession(
            call_id=call_id,
            agent=handle,
            agent_name=name,
            persona=seed,
            tenant=token.tenant,
            channel=channel,
            direction=direction,
            person=person_name or body.caller_name() or number,
            speaker_id=number,
            conversation_id=opened.conversation_id,
            pending=await conclusions(db=db, activation_ids=opened.pending),
            turns=opened.turns,
            cued=opened.turns > 0,
        )
        runtime.sessions.put(session)
        return session


async def _attach(
    runtime: VoiceRuntime, agent: str, person_id: str, channel: ChannelRef, number: str
) -> None:
    """The person the agent dialled, attached to the call's channel (see ``screen_caller``)."""
    async with runtime.deps.db.session() as db_session:
        await attach_call_identity(
            db_session,
            agent=agent,
            person_id=person_id,
            channel=channel,
            speaker_id=number,
            at=datetime.now(UTC),
        )
