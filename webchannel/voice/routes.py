"""``POST /voice/v1/chat/completions``: a voice transport's "custom LLM", one call turn at a time.

The body is an OpenAI chat-completions request; ``model`` is the agent's handle, and the
transport's stable call identifier comes from the ``x-call-id`` header, ``call.id`` (Vapi),
``metadata.call_id`` or ``user``, in that order. The bearer token is a tenant, as on ``/v1``:
its calls are its own. Each settled turn is answered at once by the fast path, streamed as
server-sent ``chat.completion.chunk`` events ending in ``data: [DONE]`` (or one JSON
completion with ``stream: false``), while the full pipeline runs on the same turn in the
background (docs/channels.md, "Live voice").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import WithJsonSchema

from contract import names
from schemas.ids import new_ulid
from schemas.models import Attribution, TaskType
from schemas.voice import (
    CALL_ID_PATTERN,
    MAX_CALL_BODY_BYTES,
    CallCompletionRequest,
    ConclusionsTaken,
    chunk,
)
from usecases.tokens import TokenPublic
from usecases.voice import (
    tell_call,
)
from webchannel.auth import integrator
from webchannel.body import parse, read_capped
from webchannel.models import Problem, inline_schema
from webchannel.routes import Handle, agent_for
from webchannel.state import WebState, web_state
from webchannel.voice.events import router as events_router
from webchannel.voice.opening import open_session
from webchannel.voice.runtime import VoiceRuntime, voice_runtime
from webchannel.voice.session import CallSession
from webchannel.voice.speech import Spoken, fast_request, plain_greeting, say_plainly, speak
from webchannel.voice.turns import follow_turn, refresh_prompt, screen

router = APIRouter(prefix="/voice/v1", tags=["voice"])
router.include_router(events_router)

Token = Annotated[TokenPublic, Depends(integrator)]
State = Annotated[WebState, Depends(web_state)]

_CALL_ID = re.compile(CALL_ID_PATTERN)

GREETING_CUE = "(The call has just connected. Greet {person}.)"
"""The turn the fast model answers when the call opens with nothing said yet."""

REFUSALS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": description}
    for status, description in {
        400: "A malformed body (not UTF-8, a NUL byte, not JSON) or agent handle.",
        401: "The bearer token is missing, unknown or revoked.",
        403: "The token is not for this agent, or the caller is not one the agent takes.",
        404: "No such agent.",
        408: "The body did not arrive in time.",
        409: "The call has ended, or its ID belongs to another agent or token.",
        413: "The body is over the service's size cap.",
        422: "A field breaks a rule, or no call identifier was sent; the field is named.",
        500: "A bug in the service: retry, and report it if it persists.",
        503: "No worker serves, or Temporal is unreachable: retry shortly.",
    }.items()
}


ANSWER: dict[int | str, dict[str, Any]] = {
    **REFUSALS,
    200: {
        "description": "The spoken answer: with `stream: true`, server-sent "
        "`chat.completion.chunk` events then `data: [DONE]`; else one `chat.completion`.",
        "content": {"text/event-stream": {}, "application/json": {}},
    },
}

BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": inline_schema(CallCompletionRequest)}},
    }
}

CallIdHeader = Annotated[
    str | None,
    WithJsonSchema({"type": "string", "pattern": CALL_ID_PATTERN}),
    Header(description="The transport's stable call identifier (else read from the body)."),
]


@router.post("/agents/{handle}/chat/completions", responses=ANSWER, openapi_extra=BODY)
async def agent_call_turn(
    handle: Handle, request: Request, token: Token, state: State, x_call_id: CallIdHeader = None
) -> Any:
    """Answer one settled turn of a live call to agent ``handle``, with only the words to say.

    A voice platform's custom-LLM URL is ``.../voice/v1/agents/{handle}``: it appends
    ``/chat/completions``, and ``model`` stays the platform's own.
    """
    return await _turn(request, token, state, handle, x_call_id)


@router.post("/chat/completions", responses=ANSWER, openapi_extra=BODY, include_in_schema=False)
async def call_turn(
    request: Request, token: Token, state: State, x_call_id: CallIdHeader = None
) -> Any:
    """The same, for a platform that names the agent in ``model`` instead of the URL."""
    return await _turn(request, token, state, None, x_call_id)


async def _turn(
    request: Request, token: TokenPublic, state: WebState, handle: str | None, x_call_id: str | None
) -> Any:
    """Answer one settled turn of a live call, at once, with only the words to be spoken."""
    entered = time.perf_counter()
    # A call's transcript grows with it: its cap is the voice endpoint's own.
    limit = max(state.max_body_bytes, MAX_CALL_BODY_BYTES)
    raw = await read_capped(request, limit=limit, timeout=state.body_timeout_s)
    body = parse(raw, CallCompletionRequest)
    call_id = body.call_id(x_call_id)
    if call_id is None:
        raise HTTPException(
            422, "no call identifier: send an x-call-id header, call.id, metadata.call_id or user"
        )
    if not _CALL_ID.fullmatch(call_id):
        raise HTTPException(
            422, "x-call-id: 1-128 letters, digits or _ . : @ + ~ - (the transport's call ID)"
        )
    handle = await agent_for(state, token, handle if handle is not None else body.model or "")
    model = body.model or handle
    runtime = await voice_runtime(request, state)
    session = await open_session(runtime, state, token, handle, call_id, body)
    said = body.last_user_text()
    settled = await session.settle(said, state.settings.voice.settle_ms / 1000)
    if settled is None:  # a later fragment of the same turn answers it
        return await _answer(
            body, iter_pieces([]), completion_id=f"chatcmpl-{new_ulid()}", model=model
        )
    spoken = Spoken()
    done: asyncio.Future[Spoken] = asyncio.get_running_loop().create_future()
    # The background run starts once the first word is out (or the answer is over), so its
    # submission's work does not delay the first word; past the fast model's limit it starts
    # regardless, so a turn whose answer is never read is not lost.
    first_word = asyncio.Event()
    # The hard gates read the caller's words beside the fast model's call, and no word is said
    # before they pass: a veto is said instead, and the model's words are dropped unheard.
    # The turn's own ID: its fast call is metered under it, and the budget leaves that call out
    # (as an activation's does), so the answer being written never refuses its own turn.
    turn_id = new_ulid()
    screening = (
        asyncio.create_task(screen(runtime, session, settled, turn_id=turn_id)) if settled else None
    )
    if settled:
        begin = _after(first_word, state.settings.voice.fast_timeout_s + 1)
        # The call's first words to reach the pipeline carry who dialled whom.
        first, session.cued = not session.cued, True
        runtime.spawn(follow_turn(runtime, state, session, settled, first, screening, done, begin))
    await refresh_prompt(runtime, state, session)
    spoken.woven = len(session.pending)
    if not settled and session.turns == 0 and _greets_plainly(runtime):  # the call's opening
        spoken.woven = 0  # nothing of the background is said: it stays for the next answer
        answer = say_plainly(plain_greeting(session), spoken)
    else:
        turn = settled or GREETING_CUE.format(person=session.person)
        answer = speak(
            runtime.deps.gateway,
            fast_request(session, body.messages, turn),
            timeout_s=state.settings.voice.fast_timeout_s,
            holding=state.settings.voice.holding_phrase,
            spoken=spoken,
            who=Attribution(
                agent=session.agent,
                channel=session.channel.key,
                conversation=session.conversation_id,
                activation=turn_id,
                trigger="voice",
            ),
        )
    pieces = _gated(screening, answer, spoken)
    session.turns += 1
    session.system_turns += 1
    own_ms = (time.perf_counter() - entered) * 1000
    return await _answer(
        body,
        _told(pieces, spoken, done, first_word, runtime, state, session, opening=not settled),
        completion_id=f"chatcmpl-{new_ulid()}",
        model=model,
        # The endpoint's own time before the fast model is asked (the model's is the rest).
        headers={"Server-Timing": f'voice;dur={own_ms:.1f};desc="before the fast model"'},
    )


def _greets_plainly(runtime: VoiceRuntime) -> bool:
    """Whether the fast model's plan has the platform greet for it (a model too small)."""
    registry = runtime.deps.gateway.registry
    return registry.plan(registry.binding(TaskType.VOICE).provider).greet_plainly


async def _gated(
    screening: asyncio.Task[str | None] | None,
    pieces: AsyncGenerator[str, None],
    spoken: Spoken,
) -> AsyncIterator[str]:
    """``pieces``, once ``screening`` has passed; its veto alone when it has not."""
    async with contextlib.aclosing(pieces):  # closing it cancels the model's call
        async for piece in pieces:
            veto = await screening if screening is not None else None
            if veto is not None:
                spoken.pieces, spoken.text, spoken.woven = [veto], veto, 0
                yield veto
                return
            screening = None
            yield piece


async def _after(event: asyncio.Event, limit_s: float) -> None:
    """Return once ``event`` is set, or after ``limit_s`` seconds."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), limit_s)


async def iter_pieces(pieces: list[str]) -> AsyncIterator[str]:
    """Fixed pieces as a stream (a refusal spoken, or nothing)."""
    for piece in pieces:
        yield piece


async def _told(
    pieces: AsyncIterator[str],
    spoken: Spoken,
    done: asyncio.Future[Spoken],
    first_word: asyncio.Event,
    runtime: VoiceRuntime,
    state: WebState,
    session: CallSession,
    *,
    opening: bool = False,
) -> AsyncIterator[str]:
    """``pieces``, then what was said handed to the turn's background work (even if cut off).

    ``opening``: the call opened in silence and this is the greeting; what was said of it is
    kept for the caller's first words to carry into the conversation.
    """
    try:
        async for piece in pieces:
            yield piece
            first_word.set()
    finally:
        first_word.set()
        spoken.text = spoken.text or "".join(spoken.pieces).strip()
        if opening and spoken.text and not session.cued:
            session.greeting = spoken.text
        if spoken.woven:
            del session.pending[: spoken.woven]
            runtime.spawn(
                tell_call(
                    client=state.client,
                    call_id=session.call_id,
                    signal=names.CONCLUSIONS_TAKEN,
                    message=ConclusionsTaken(count=spoken.woven),
                )
            )
        if not done.done():
            done.set_result(spoken)


async def _answer(
    body: CallCompletionRequest,
    pieces: AsyncIterator[str],
    *,
    completion_id: str,
    model: str,
    headers: dict[str, str] | None = None,
) -> Any:
    created = int(time.time())
    if body.stream:

        async def events() -> AsyncIterator[str]:
            async for piece in pieces:
                data = chunk(
                    completion_id=completion_id,
                    model=model,
                    created=created,
                    text=piece,
                    finish=None,
                )
                yield f"data: {json.dumps(data)}\n\n"
            last = chunk(
                completion_id=completion_id,
                model=model,
                created=created,
                text=None,
                finish="stop",
            )
            yield f"data: {json.dumps(last)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})},
        )

    async def whole() -> JSONResponse:
        text = "".join([piece async for piece in pieces]).strip()
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
            },
            headers=headers,
        )

    return await whole()
