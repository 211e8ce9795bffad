"""Pictures people send an agent: kept where the agent's image tools find them.

A channel that receives a picture keeps it here first, then submits the person's message
with the picture's ID in ``InboundEvent.images``: the history carries the ID, never the bytes.
The agent reads ``[picture sent: image ID]`` in the person's turn and can edit the picture
with ``edit_image``, as it edits its own renders.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from activities.images.files import NotAPictureError, keep, picture_suffix
from activities.images.header import dimensions
from schemas.ids import check_handle, check_ulid, new_ulid
from schemas.settings import Settings
from usecases.agents import find_agent
from usecases.errors import UnknownAgentError, UseCaseError


class PictureRefusedError(UseCaseError):
    """Not a picture the agent can use, or too large."""


@dataclass(frozen=True)
class KeptPicture:
    """A picture kept for an agent: the ID an event names it by, and where it is."""

    image_id: str
    path: Path


def check_picture_size(size: int, settings: Settings) -> None:
    """Refuse a picture of ``size`` bytes before reading it, if it is over the limit.

    Raises:
        PictureRefusedError: over ``images.max_sent_bytes``.
    """
    limit = settings.images.max_sent_bytes
    if size > limit:
        raise PictureRefusedError(
            f"the picture is {size:,} bytes, more than {limit:,} "
            "(images.max_sent_bytes): send a smaller one"
        )


async def keep_sent_picture(
    *, settings: Settings, agent: str, content: bytes, image_id: str | None = None
) -> KeptPicture:
    """Keep a picture a person sent ``agent``, under a fresh ID (or ``image_id``).

    A channel that may read the same message twice (a poller restarted before it saved its
    offset) passes an ID derived from the message, so the event it builds is the same.

    Raises:
        UnknownAgentError: no such agent.
        PictureRefusedError: not a PNG, JPEG or WebP picture, over ``images.max_sent_bytes``,
            or declaring more pixels than ``senses.max_pixels`` (read from its header: it is
            never decoded here, so a small file declaring a vast picture costs nothing).
    """
    check_handle(agent)
    check_picture_size(len(content), settings)
    try:
        suffix = picture_suffix(content)
    except NotAPictureError as err:
        raise PictureRefusedError(f"{err}: send one of those") from None
    try:
        width, height = dimensions(content)
    except NotAPictureError as err:
        raise PictureRefusedError(f"{err}: send it again, whole") from None
    most = settings.senses.max_pixels
    if width * height > most:
        raise PictureRefusedError(
            f"the picture declares {width:,} x {height:,} pixels, more than {most:,} "
            "(senses.max_pixels): send a smaller one"
        )
    if await find_agent(settings=settings, handle=agent) is None:
        raise UnknownAgentError(agent)
    image_id = check_ulid(image_id, what="image id") if image_id else new_ulid()
    path = settings.home / "images" / agent / f"{image_id}{suffix}"
    await asyncio.to_thread(keep, path, content)
    return KeptPicture(image_id=image_id, path=path)
