"""A Telegram message's photo or voice note, fetched and kept before its event goes.

Each file is refused by its size as Telegram declares it before it is fetched, then by what
its bytes are (``usecases.images``, ``usecases.recordings``) under the ID the message fixes
(``updates.media_id_for``), so a re-read update keeps the same file under the same ID and
builds the same event. A file refused is said in the event's text instead (the person learns
why from the agent); a file Telegram would not hand over raises, and the poller tries the
update again later: nothing is dropped.
"""

from __future__ import annotations

from telegram import Bot

from schemas.events import InboundEvent, Modality
from schemas.settings import Settings
from teamchat.telegram.updates import Incoming, MediaRef
from usecases.images import PictureRefusedError, check_picture_size, keep_sent_picture
from usecases.recordings import (
    RecordingRefusedError,
    check_recording_size,
    keep_sent_recording,
)


async def with_media(bot: Bot, settings: Settings, agent: str, incoming: Incoming) -> InboundEvent:
    """``incoming``'s event naming the files it carries, each kept for ``agent``.

    Raises:
        telegram.error.TelegramError: Telegram would not hand a file over (try again later).
    """
    event = incoming.event
    if not incoming.media:
        return event
    images: list[str] = []
    recordings: list[str] = []
    refused: list[str] = []
    for ref in incoming.media:
        try:
            if ref.kind == "image":
                images.append(await _keep_picture(bot, settings, agent, ref))
            else:
                recordings.append(await _keep_recording(bot, settings, agent, ref))
        except (PictureRefusedError, RecordingRefusedError) as err:
            what = "picture" if ref.kind == "image" else "recording"
            refused.append(f"[{what} sent, not kept: {err}]")
    modality = Modality.IMAGE if images else Modality.AUDIO if recordings else Modality.TEXT
    return InboundEvent.model_validate(
        {
            **event.model_dump(),
            "text": "\n".join([event.text, *refused]),
            "images": images,
            "recordings": recordings,
            "modality": modality,
        }
    )


async def _fetch(bot: Bot, ref: MediaRef) -> bytes:
    found = await bot.get_file(ref.file_id)
    return bytes(await found.download_as_bytearray())


async def _keep_picture(bot: Bot, settings: Settings, agent: str, ref: MediaRef) -> str:
    if ref.size is not None:
        check_picture_size(ref.size, settings)
    content = await _fetch(bot, ref)
    kept = await keep_sent_picture(
        settings=settings, agent=agent, content=content, image_id=ref.media_id
    )
    return kept.image_id


async def _keep_recording(bot: Bot, settings: Settings, agent: str, ref: MediaRef) -> str:
    if ref.size is not None:
        check_recording_size(ref.size, settings)
    content = await _fetch(bot, ref)
    kept = await keep_sent_recording(
        settings=settings, agent=agent, content=content, audio_id=ref.media_id
    )
    return kept.audio_id
