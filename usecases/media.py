"""Media uploaded for a later message: a picture or a recording, and whose it is.

A channel that carries files apart from the message (the web API: upload, then name it in a
message) keeps the file through the picture or recording use case, by what its bytes are,
whatever it is called or declared to be, and notes its owner beside it (``{id}.owner``). A
message may name only media its own owner uploaded: one web token never reaches another's
pictures, not even by guessing an ID.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from activities.images.files import NotAPictureError, find_image, picture_suffix
from activities.senses.recordings import find_recording
from schemas.settings import Settings
from store.private_files import create_private
from usecases.errors import UseCaseError
from usecases.images import keep_sent_picture
from usecases.recordings import RecordingRefusedError, keep_sent_recording

MediaKind = Literal["image", "audio"]


class MediaNotFoundError(UseCaseError):
    """A message names media its sender does not own (or that does not exist)."""


@dataclass(frozen=True)
class KeptMedia:
    """An uploaded file kept for an agent: its ID, what it is and its size."""

    media_id: str
    kind: MediaKind
    size: int


def _owner_mark(owner: str) -> bytes:
    # A digest, so the file holds no tenant ID in the clear and any owner string fits.
    return hashlib.sha256(f"persyn-media-owner:{owner}".encode()).hexdigest().encode()


async def keep_uploaded_media(
    *, settings: Settings, agent: str, content: bytes, owner: str
) -> KeptMedia:
    """Keep ``content`` as a picture or recording of ``agent``'s, owned by ``owner``.

    Raises:
        UnknownAgentError: no such agent.
        PictureRefusedError: a picture that breaks the picture rules (size, pixels, header).
        RecordingRefusedError: neither a picture nor a recording, or a recording too large.
    """
    try:
        picture_suffix(content)
    except NotAPictureError:
        try:
            recording = await keep_sent_recording(settings=settings, agent=agent, content=content)
        except RecordingRefusedError as err:
            if str(err).startswith("not an Ogg"):
                raise RecordingRefusedError(
                    "not a picture (PNG, JPEG, WebP) nor a recording (Ogg, MP3, WAV, FLAC, "
                    "M4A, WebM): upload one of those"
                ) from None
            raise
        await _mark(recording.path, recording.audio_id, owner)
        return KeptMedia(media_id=recording.audio_id, kind="audio", size=len(content))
    picture = await keep_sent_picture(settings=settings, agent=agent, content=content)
    await _mark(picture.path, picture.image_id, owner)
    return KeptMedia(media_id=picture.image_id, kind="image", size=len(content))


async def _mark(path: Path, media_id: str, owner: str) -> None:
    await asyncio.to_thread(create_private, path.with_name(f"{media_id}.owner"), _owner_mark(owner))


async def check_owned(
    *, settings: Settings, agent: str, owner: str, media_ids: list[str], kind: MediaKind
) -> None:
    """Refuse unless every one of ``media_ids`` is ``kind`` media of ``agent``'s ``owner`` owns.

    Raises:
        MediaNotFoundError: the first that is not, named as unknown (whose it is is not told).
    """
    for media_id in media_ids:
        if not await asyncio.to_thread(_owns, settings, agent, owner, media_id, kind):
            what = "picture" if kind == "image" else "recording"
            raise MediaNotFoundError(
                f"there is no {what} {media_id} uploaded by you for agent {agent!r}: "
                "upload it first (POST .../media)"
            )


def _owns(settings: Settings, agent: str, owner: str, media_id: str, kind: MediaKind) -> bool:
    root = settings.home / ("images" if kind == "image" else "audio")
    path = (find_image if kind == "image" else find_recording)(root, agent, media_id)
    if path is None:
        return False
    try:
        return path.with_name(f"{media_id}.owner").read_bytes() == _owner_mark(owner)
    except OSError:
        return False
