"""The ``/v1`` endpoints: post a message, read its completion marker, follow a channel.

Every refusal is a 4xx (or 503 while no worker serves) whose body is ``{"detail": "<one
line>"}`` naming what to fix; a refused request stores and submits nothing.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Path, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError, WithJsonSchema
from temporalio.service import RPCError, RPCStatusCode

from schemas.channel_names import channel_name_pattern
from schemas.events import CompletionMarker, InboundEvent, Receipt, ReceiptStatus
from schemas.ids import HANDLE_PATTERN, ULID_PATTERN, InvalidIdError, check_handle, check_ulid
from temporal.inbox import SubmitRejectedError
from usecases import submission
from usecases.agents import agent_exists
from usecases.channel_feed import FeedKind, announce_event, channel_feed, mark_shown
from usecases.errors import NoWorkerError, TemporalUnreachableError
from usecases.media import MediaKind, MediaNotFoundError, check_owned
from usecases.tokens import TokenPublic, claim_event, owns_event
from webchannel.auth import allow, integrator
from webchannel.body import BodyError, first_error, parse, read_capped
from webchannel.limits import retry_after
from webchannel.models import Problem, WebMessage, WebReceipt, inline_schema
from webchannel.sse import with_keepalive
from webchannel.state import WebState, web_state
from webchannel.stream_caps import (
    RETRY_AFTER_S,
    CapHit,
    SlotStreamingResponse,
    StreamCapError,
    StreamSlot,
)
from webchannel.tenancy import MAX_NAME_CHARS, ChannelNameError, public_name, tenant_channel

router = APIRouter(prefix="/v1", tags=["agents"])

MAX_WAIT_S = 60.0
"""The longest a caller may ask ``POST .../messages`` to wait for the reply (``Prefer: wait``)."""

_PREFER_WAIT = re.compile(r"\bwait=(\d+(?:\.\d+)?)")

Token = Annotated[TokenPublic, Depends(integrator)]
State = Annotated[WebState, Depends(web_state)]
# The patterns are published for clients; the routes check the values themselves, so a bad one
# is refused (400) with a line that names it rather than with the pattern.
Handle = Annotated[
    str, Path(description="The agent's handle.", json_schema_extra={"pattern": HANDLE_PATTERN})
]
EventIdPath = Annotated[
    str, Path(description="The event's ULID.", json_schema_extra={"pattern": ULID_PATTERN})
]
ChannelPath = Annotated[
    str,
    Path(
        description="The channel's name on the web service.",
        json_schema_extra={"pattern": channel_name_pattern(MAX_NAME_CHARS)},
    ),
]

# A header is absent or a string: published as a string, not as "string or null".
_HEADER = WithJsonSchema({"type": "string"})

RETRY_BUSY_S = 5
"""``Retry-After`` when the agent already has as many messages in flight as Temporal allows."""

REFUSALS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": description}
    for status, description in {
        400: "A malformed handle, event ID, body (not UTF-8, a NUL byte, not JSON).",
        401: "The bearer token is missing, unknown or revoked.",
        403: "The token is not for this agent.",
        404: "No such agent (or, for a marker, not known yet).",
        422: "A parameter breaks a rule; the parameter is named.",
        500: "A bug in the service: retry, and report it if it persists.",
    }.items()
}


def _handle(handle: str) -> str:
    try:
        return check_handle(handle)
    except InvalidIdError as err:
        raise HTTPException(400, str(err)) from None


def checked_ulid(value: str, what: str) -> str:
    """``value`` as a ULID, or 400 naming ``what``."""
    try:
        return check_ulid(value, what=what)
    except InvalidIdError as err:
        raise HTTPException(400, str(err)) from None


async def agent_for(state: WebState, token: TokenPublic, handle: str) -> str:
    """The agent ``handle`` names: 400 malformed, 403 not the token's, 404 unknown."""
    handle = _handle(handle)
    allow(token, handle)
    if not await agent_exists(db=state.db, handle=handle):
        raise HTTPException(404, f"there is no agent {handle!r}")
    return handle


def within_rate(state: WebState, token: TokenPublic) -> None:
    """Refuse (429) a message over the token's rate, before its body is read."""
    wait = state.limits.take(token.token_id)
    if wait is not None:
        after = retry_after(wait)
        raise HTTPException(
            429,
            f"token {token.token_id} is over its message rate ({state.limits.per_minute} a "
            f"minute, {state.limits.burst} at once): resend the message in {after} s",
            {"Retry-After": after},
        )


def _event(token: TokenPublic, message: WebMessage) -> InboundEvent:
    # An empty ID is a bad ID, not an omitted one (the service would make one up).
    event_id = checked_ulid(message.event_id, "event id") if message.event_id is not None else None
    try:
        return submission.build_event(
            # The token's own namespace: its channels (and so its speakers) are no one else's.
            channel=tenant_channel(token, message.channel),
            speaker=message.speaker,
            text=message.text,
            event_id=event_id,
            addressed=message.addressed,
            stream=message.stream,
            images=message.images,
            recordings=message.recordings,
        )
    except ValidationError as err:
        raise HTTPException(422, first_error(err)) from None
    except ChannelNameError as err:
        raise HTTPException(422, f"channel: {err}") from None


async def _own_media(state: WebState, token: TokenPublic, handle: str, event: InboundEvent) -> None:
    """Refuse (404) a message naming media its token's tenant did not upload for ``handle``.

    Another tenant's media read as unknown ones: not even their existence is told.
    """
    kinds: tuple[tuple[MediaKind, str, list[str]], ...] = (
        ("image", "images", event.images),
        ("audio", "recordings", event.recordings),
    )
    for kind, field, ids in kinds:
        try:
            await check_owned(
                settings=state.settings, agent=handle, owner=token.tenant, media_ids=ids, kind=kind
            )
        except MediaNotFoundError as err:
            raise HTTPException(404, f"{field}: {err}") from None


def _wait_for(prefer: str | None) -> float:
    found = _PREFER_WAIT.search(prefer or "")
    return min(float(found.group(1)), MAX_WAIT_S) if found else 0.0


def _receipt(receipt: Receipt, event: InboundEvent) -> WebReceipt:
    base = f"/v1/agents/{receipt.agent}"
    return WebReceipt(
        event_id=receipt.event_id,
        agent=receipt.agent,
        status=receipt.status,
        marker=receipt.marker,
        marker_url=f"{base}/markers/{receipt.event_id}",
        stream_url=f"{base}/channels/{public_name(event.channel)}/stream",
    )


@router.post(
    "/agents/{handle}/messages",
    status_code=202,
    response_model=WebReceipt,
    responses={
        **REFUSALS,
        200: {"model": WebReceipt, "description": "Completed within `Prefer: wait=N`."},
        404: {
            "model": Problem,
            "description": "No such agent, or the message names media your token did not "
            "upload (POST .../media).",
        },
        408: {"model": Problem, "description": "The body did not arrive in time."},
        409: {"model": Problem, "description": "The event ID was used for a different event."},
        413: {"model": Problem, "description": "The body is over the service's size cap."},
        422: {"model": Problem, "description": "A field breaks a rule; the field is named."},
        429: {"model": Problem, "description": "The token posted over its rate; see Retry-After."},
        503: {
            "model": Problem,
            "description": "No worker serves, Temporal is unreachable, or the agent has as many "
            "messages in flight as Temporal allows (10): resend after Retry-After.",
        },
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": inline_schema(WebMessage)}},
        }
    },
)
async def post_message(
    handle: Handle,
    request: Request,
    token: Token,
    state: State,
    prefer: Annotated[
        str | None,
        _HEADER,
        Header(description="`wait=N`: wait up to N seconds (at most 60) for the reply."),
    ] = None,
) -> Any:
    """Submit a message to agent ``handle`` on web channel ``channel``.

    Idempotent by ``event_id``: posting the same message again is the same submission, and the
    agent replies once. Returns 202 once the agent has accepted the message; the reply arrives
    on the channel's stream and in the completion marker. With ``Prefer: wait=N`` the service
    waits up to N seconds and returns 200 with the marker if the agent answered by then.
    """
    handle = await agent_for(state, token, handle)
    within_rate(state, token)
    raw = await read_capped(request, limit=state.max_body_bytes, timeout=state.body_timeout_s)
    message = parse(raw, WebMessage)
    event = _event(token, message)
    await _own_media(state, token, handle, event)
    if not await claim_event(db=state.db, token=token, handle=handle, event_id=event.event_id):
        # Another tenant's event: refused as any reuse of an event ID is.
        raise HTTPException(409, f"event_id {event.event_id} was already used: use a fresh ULID")
    try:
        if event.stream:
            await announce_event(
                db=state.db, handle=handle, channel=event.channel, event_id=event.event_id
            )
        wait = _wait_for(prefer)
        done = None
        submitting = time.perf_counter()
        if wait > 0:
            # One update that returns with the reply; past the wait, the accept below is the
            # same submission (same update ID), so nothing is sent twice.
            done = await submission.wait_for_receipt(
                client=state.client,
                settings=state.settings,
                presence=state.presence,
                handle=handle,
                event=event,
                timeout=wait,
            )
        receipt = done or await submission.accept(
            client=state.client,
            settings=state.settings,
            presence=state.presence,
            handle=handle,
            event=event,
        )
    except NoWorkerError as err:
        raise HTTPException(
            503, f"{err}: retry later with the same event_id {event.event_id}", {"Retry-After": "5"}
        ) from None
    except TemporalUnreachableError as err:
        raise HTTPException(
            503, f"{err}: retry later with the same event_id {event.event_id}", {"Retry-After": "5"}
        ) from None
    except SubmitRejectedError as err:
        status = 409 if "already used" in str(err) else 422
        raise HTTPException(status, str(err).splitlines()[0]) from None
    except RPCError as err:
        if err.status is not RPCStatusCode.RESOURCE_EXHAUSTED:
            raise
        # Temporal holds at most 10 updates in flight per workflow (each message is one until
        # the agent answers it): past that the agent is busy, not broken.
        raise HTTPException(
            503,
            f"agent {handle!r} has as many messages in flight as it may hold: resend in "
            f"{RETRY_BUSY_S} s with the same event_id {event.event_id}",
            {"Retry-After": str(RETRY_BUSY_S)},
        ) from None
    # How long the agent's inbox took (the shared use case): the rest is the web channel's own.
    agent_ms = (time.perf_counter() - submitting) * 1000
    body = _receipt(receipt, event).model_dump(mode="json")
    completed = receipt.status is ReceiptStatus.COMPLETED
    return JSONResponse(
        body,
        status_code=200 if completed else 202,
        headers={"Server-Timing": f'agent;dur={agent_ms:.1f};desc="submit to receipt"'},
    )


@router.get(
    "/agents/{handle}/markers/{event_id}",
    response_model=CompletionMarker,
    responses={
        **REFUSALS,
        503: {"model": Problem, "description": "The agent could not be asked just now."},
    },
)
async def get_marker(
    handle: Handle, event_id: EventIdPath, token: Token, state: State
) -> CompletionMarker:
    """The completion marker of an event: how the agent answered it (404 until it has).

    Markers are kept for about an hour after completion.
    """
    handle = await agent_for(state, token, handle)
    event_id = checked_ulid(event_id, "event id")
    unknown = f"no marker for event {event_id}: never received, or expired"
    if not await owns_event(db=state.db, token=token, handle=handle, event_id=event_id):
        # Another tenant's event reads as an unknown one: not even its existence is told.
        raise HTTPException(404, unknown)
    try:
        answer = await submission.read_marker(client=state.client, handle=handle, event_id=event_id)
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:  # the agent's inbox never ran
            raise HTTPException(404, f"no marker for event {event_id}: never received") from None
        raise HTTPException(
            503, f"cannot ask agent {handle!r} for the marker now: {err.message}: ask again"
        ) from None
    if answer.marker is not None:
        return answer.marker
    if answer.pending:
        raise HTTPException(404, f"event {event_id} is still being answered: ask again shortly")
    raise HTTPException(404, unknown)


@router.get(
    "/agents/{handle}/channels/{channel}/stream",
    response_class=StreamingResponse,
    responses={
        **REFUSALS,
        200: {
            "content": {"text/event-stream": {}},
            "description": "Server-sent events: `delta` (a piece of a reply being written, no "
            "ID), `reply` and `unprompted` (each with its message ID as the event ID; a "
            "`reply` and a `delta` name the posted event they answer in `event_id`). Send "
            "`Last-Event-ID` when reconnecting to get what was sent since, once.",
        },
        429: {"model": Problem, "description": "The token holds its cap of open streams."},
        503: {
            "model": Problem,
            "description": "The service holds its cap of open streams, or cannot follow live "
            "events just now: reconnect after Retry-After.",
        },
    },
)
async def stream_channel(
    handle: Handle,
    channel: ChannelPath,
    token: Token,
    state: State,
    last_event_id: Annotated[
        str | None,
        WithJsonSchema({"type": "string", "pattern": ULID_PATTERN}),
        Header(
            description="The last message ID seen: resume after it. Or the `event_id` of a "
            "message you posted: resume from its reply."
        ),
    ] = None,
) -> StreamingResponse:
    """Follow web channel ``channel`` of agent ``handle``: deltas, replies, unprompted messages.

    Only what the agent said on this token's own channel of that name is sent.
    """
    handle = await agent_for(state, token, handle)
    try:
        where = tenant_channel(token, channel)
    except ValidationError as err:
        raise HTTPException(400, f"channel {channel!r}: {first_error(err)}") from None
    except ChannelNameError as err:
        raise HTTPException(400, f"channel: {err}") from None
    # An empty header is no ID either: refused, not read as "from the start".
    after = checked_ulid(last_event_id, "Last-Event-ID") if last_event_id is not None else None
    if not state.listener.ready:
        raise HTTPException(
            503,
            f"live events are unavailable while the database is away: reconnect in "
            f"{RETRY_AFTER_S} s",
            {"Retry-After": str(RETRY_AFTER_S)},
        )
    slot = _stream_slot(state, token)

    async def events() -> AsyncIterator[str]:
        async with channel_feed(
            db=state.db, listener=state.listener, handle=handle, channel=where, after=after
        ) as items:
            async for chunk, item in with_keepalive(items):
                yield chunk
                if item is not None and item.kind is FeedKind.UNPROMPTED and item.message_id:
                    # Written to the connection: no longer kept for the next reader.
                    await mark_shown(db=state.db, message_ids=[item.message_id])

    return SlotStreamingResponse(
        events(),
        slot=slot,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _stream_slot(state: WebState, token: TokenPublic) -> StreamSlot:
    """A place under the stream caps, or 429 (the token's cap) or 503 (the service's)."""
    try:
        return state.streams.take(token.token_id)
    except StreamCapError as err:
        retry = {"Retry-After": str(RETRY_AFTER_S)}
        if err.cap is CapHit.TOKEN:
            raise HTTPException(
                429,
                f"token {token.token_id} has {err.limit} streams open, its cap: close one, "
                f"or reconnect in {RETRY_AFTER_S} s",
                retry,
            ) from None
        raise HTTPException(
            503,
            f"the service has {err.limit} streams open, its cap: reconnect in {RETRY_AFTER_S} s",
            retry,
        ) from None


def body_error(_: Request, err: Exception) -> JSONResponse:
    """A refused body as ``{"detail": ...}`` with its status (an exception handler)."""
    assert isinstance(err, BodyError)
    # A body refused before it was read whole leaves the rest in flight: end the connection.
    unread = err.status in (408, 413)
    headers = {"Connection": "close"} if unread else None
    return JSONResponse({"detail": err.detail}, status_code=err.status, headers=headers)
