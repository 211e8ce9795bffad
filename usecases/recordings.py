"""Recordings people send an agent (voice notes): kept, then transcribed at admission.

A channel that receives a recording keeps it here first, then submits the person's message
with the recording's ID in ``InboundEvent.recordings``: the history carries the ID, never the
bytes. The agent reads ``[recording sent: audio ID]`` in the person's turn, with a transcript
of it when an endpoint is configured (``activities.senses``), or a plain note that it cannot
hear it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from activities.images.files import keep
from activities.senses.recordings import NotARecordingError, recording_suffix
from schemas.ids import check_handle, check_ulid, new_ulid
from schemas.settings import Settings
from usecases.agents import find_agent
from usecases.errors import UnknownAgentError, UseCaseError


class RecordingRefusedError(UseCaseError):
    """Not a recording the agent can use, or too large."""


@dataclass(frozen=True)
class KeptRecording:
    """A recording kept for an agent: the ID an event names it by, and where it is."""

    audio_id: str
    path: Path


def check_recording_size(size: int, settings: Settings) -> None:
    """Refuse a recording of ``size`` bytes before reading it, if it is over the limit.

    Raises:
        RecordingRefusedError: over ``senses.max_audio_bytes``.
    """
    limit = settings.senses.max_audio_bytes
    if size > limit:
        raise RecordingRefusedError(
            f"the recording is {size:,} bytes, more than {limit:,} "
            "(senses.max_audio_bytes): send a shorter one"
        )


async def keep_sent_recording(
    *, settings: Settings, agent: str, content: bytes, audio_id: str | None = None
) -> KeptRecording:
    """Keep a recording a person sent ``agent``, under a fresh ID (or ``audio_id``).

    ``audio_id`` is for a channel that may read the same message twice, as for pictures.

    Raises:
        UnknownAgentError: no such agent.
        RecordingRefusedError: not an Ogg, MP3, WAV, FLAC, M4A or WebM recording (by its
            first bytes, whatever it is called), or over ``senses.max_audio_bytes``.
    """
    check_handle(agent)
    check_recording_size(len(content), settings)
    try:
        suffix = recording_suffix(content)
    except NotARecordingError as err:
        raise RecordingRefusedError(f"{err}: send one of those") from None
    if await find_agent(settings=settings, handle=agent) is None:
        raise UnknownAgentError(agent)
    audio_id = check_ulid(audio_id, what="audio id") if audio_id else new_ulid()
    path = settings.home / "audio" / agent / f"{audio_id}{suffix}"
    await asyncio.to_thread(keep, path, content)
    return KeptRecording(audio_id=audio_id, path=path)
