"""When the vision or transcription model fails, the turn goes on and says so; nothing is lost.

A timeout, a 429 or a 500 from the local server: the person's turn says the picture or
recording could not be perceived (and why), the agent answers, the original stays kept, and
no caption is kept for it, so the next event naming it tries again: a failed caption is not
retried for the turn it failed in (the turn does not wait), but it is the next time.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from temporalio.client import Client

from schemas.events import InboundEvent, Modality, Outcome
from schemas.models import TaskType
from tests.fakes.provider_server import FakeProviderServer
from tests.harness import Harness, Stack, event
from tests.senses.conftest import OGG, png, senses_worker
from usecases.images import keep_sent_picture
from usecases.recordings import keep_sent_recording


async def _turn(h: Harness, agent: str, **media: list[str]) -> str:
    sent = event("Here it is.").model_copy(update={**media, "modality": Modality.IMAGE})
    receipt = await h.send(agent, InboundEvent.model_validate(sent.model_dump()))
    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    return h.provider.last(TaskType.RESPOND).messages[-1].content


@pytest.mark.parametrize(
    ("status", "why"), [(429, "rate limited"), (500, "a server error")], ids=["429", "500"]
)
async def test_a_refused_caption_is_said_plainly_and_tried_again_next_time(
    client: Client,
    stack: Stack,
    fake: FakeProviderServer,
    tmp_path: Path,
    status: int,
    why: str,
) -> None:
    async with senses_worker(client, stack, tmp_path, server=fake, vision="openai-compatible") as h:
        agent = (await h.create_agent()).handle
        kept = await keep_sent_picture(settings=h.deps.settings, agent=agent, content=png())
        fake.fail(status)
        turn = await _turn(h, agent, images=[kept.image_id])

        note = f"[picture sent: image {kept.image_id}] (it could not be perceived ({why});"
        assert note in turn and "do not guess what it shows)" in turn
        assert kept.path.exists()
        assert not (kept.path.parent / f"{kept.image_id}.caption.json").exists()

        turn = await _turn(h, agent, images=[kept.image_id])
        assert "described by test-vision:" in turn and "A red kite" in turn
        assert len(fake.requests) == 2


async def test_a_slow_model_holds_the_turn_no_longer_than_the_bound(
    client: Client, stack: Stack, fake: FakeProviderServer, tmp_path: Path
) -> None:
    async with senses_worker(
        client,
        stack,
        tmp_path,
        server=fake,
        vision="openai-compatible",
        transcribe=True,
        senses={"perceive_seconds": 1.0},
    ) as h:
        agent = (await h.create_agent()).handle
        picture = await keep_sent_picture(settings=h.deps.settings, agent=agent, content=png())
        voice = await keep_sent_recording(settings=h.deps.settings, agent=agent, content=OGG)
        fake.delay(6, times=2)
        started = time.monotonic()
        turn = await _turn(h, agent, images=[picture.image_id], recordings=[voice.audio_id])

        assert time.monotonic() - started < 6  # the agent did not wait for the model
        assert f"[picture sent: image {picture.image_id}] (nothing came back within 1 s;" in turn
        assert f"[recording sent: audio {voice.audio_id}] (nothing came back within 1 s;" in turn
        assert picture.path.exists() and voice.path.exists()
