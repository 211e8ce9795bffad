"""``POST /v1/agents/{handle}/media``: upload a picture or a recording for a later message.

The file is the raw body or the ``file`` part of a multipart form; what it is comes from its
bytes, never its name or declared type. The answer is its media ID, which a message names in
``images`` or ``recordings``. Media are the token's tenant's: a message naming another
tenant's media is refused as naming unknown ones (``usecases.media``).
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from usecases.images import PictureRefusedError
from usecases.media import keep_uploaded_media
from usecases.recordings import RecordingRefusedError
from webchannel.body import read_capped
from webchannel.models import Problem
from webchannel.routes import REFUSALS, Handle, State, Token, agent_for, within_rate
from webchannel.uploads import UploadError, uploaded_file

router = APIRouter(prefix="/v1", tags=["media"])

FORM_OVERHEAD = 16_384
"""Room for a multipart form's boundaries and part headers around the file."""
UPLOAD_TIMEOUT_S = 120.0
"""Seconds a client has to send an upload once its headers are in (a recording is large)."""


class WebMedia(BaseModel):
    """An uploaded file, kept for the agent: name it in a message's ``images`` or ``recordings``."""

    media_id: str = Field(description="The media ID (a ULID) a message names it by.")
    kind: Literal["image", "audio"] = Field(
        description="image: name it in `images`; audio: in `recordings`."
    )
    size: int = Field(description="Its size in bytes.")


BINARY = {"schema": {"type": "string", "format": "binary", "minLength": 1}}
FORM = {
    "schema": {
        "type": "object",
        "properties": {"file": {"type": "string", "format": "binary", "minLength": 1}},
        "required": ["file"],
    }
}


@router.post(
    "/agents/{handle}/media",
    status_code=201,
    response_model=WebMedia,
    responses={
        **REFUSALS,
        408: {"model": Problem, "description": "The body did not arrive in time."},
        413: {"model": Problem, "description": "The file is over the size limit it names."},
        422: {
            "model": Problem,
            "description": "Not a picture (PNG, JPEG, WebP) nor a recording (Ogg, MP3, WAV, "
            "FLAC, M4A, WebM), a picture declaring too many pixels, or an empty or unreadable "
            "form.",
        },
        429: {"model": Problem, "description": "The token posted over its rate; see Retry-After."},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/octet-stream": BINARY, "multipart/form-data": FORM},
        }
    },
)
async def upload_media(handle: Handle, request: Request, token: Token, state: State) -> WebMedia:
    """Keep a picture or recording for agent ``handle``, for a message to name by its ID.

    Counted against the token's message rate. A picture is kept up to `images.max_sent_bytes`
    and `senses.max_pixels` (read from its header, never decoded here); a recording up to
    `senses.max_audio_bytes`.
    """
    handle = await agent_for(state, token, handle)
    within_rate(state, token)
    settings = state.settings
    largest = max(settings.images.max_sent_bytes, settings.senses.max_audio_bytes)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > largest + FORM_OVERHEAD:
        raise HTTPException(
            413,
            f"the upload is {int(declared):,} bytes, more than the largest picture "
            f"({settings.images.max_sent_bytes:,}, images.max_sent_bytes) or recording "
            f"({settings.senses.max_audio_bytes:,}, senses.max_audio_bytes): send a smaller one",
        )
    timeout = max(state.body_timeout_s, UPLOAD_TIMEOUT_S)
    raw = await read_capped(request, limit=largest + FORM_OVERHEAD, timeout=timeout)
    try:
        content = uploaded_file(request.headers.get("content-type"), raw)
        kept = await keep_uploaded_media(
            settings=settings, agent=handle, content=content, owner=token.tenant
        )
    except UploadError as err:
        raise HTTPException(422, str(err)) from None
    except (PictureRefusedError, RecordingRefusedError) as err:
        raise HTTPException(413 if "more than" in str(err) else 422, str(err)) from None
    return WebMedia(media_id=kept.media_id, kind=kept.kind, size=kept.size)
