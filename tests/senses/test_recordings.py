"""A recording a person sends is transcribed through an OpenAI-compatible endpoint.

On a real worker, Temporal and PostgreSQL, against the local server speaking OpenAI's
``/v1/audio/transcriptions``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client

from activities.senses.transcribe import transcription_endpoint
from schemas.events import InboundEvent, Modality, Outcome
from schemas.models import TaskType
from schemas.senses import OPENAI_URL
from tests.fakes.provider_server import FakeProviderServer
from tests.fences import only_fenced
from tests.harness import Stack, event
from tests.observability.fakes import RecordingMeter
from tests.senses.conftest import OGG, senses_worker
from usecases.recordings import RecordingRefusedError, keep_sent_recording


async def test_a_voice_note_is_transcribed_fenced_and_metered(
    client: Client, stack: Stack, fake: FakeProviderServer, tmp_path: Path
) -> None:
    fake.transcript = "Can you remind me to water the tomatoes?"
    meter = RecordingMeter()
    async with senses_worker(
        client, stack, tmp_path, server=fake, transcribe=True, meters=[meter]
    ) as h:
        agent = (await h.create_agent()).handle
        kept = await keep_sent_recording(settings=h.deps.settings, agent=agent, content=OGG)
        assert kept.path == tmp_path / "audio" / agent / f"{kept.audio_id}.ogg"
        sent = event("(a voice note)").model_copy(
            update={"recordings": [kept.audio_id], "modality": Modality.AUDIO}
        )
        receipt = await h.send(agent, InboundEvent.model_validate(sent.model_dump()))
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE

        [asked] = fake.requests
        assert asked.path == "/v1/audio/transcriptions"
        form = asked.body["form"]
        assert OGG in form and b"test-whisper" in form and f"{kept.audio_id}.ogg".encode() in form

        turn = h.provider.last(TaskType.RESPOND).messages[-1].content
        assert f"[recording sent: audio {kept.audio_id}] transcribed by test-whisper:" in turn
        [transcript] = only_fenced(turn, "water the tomatoes")
        assert transcript.source == "transcript" and "test-whisper" in transcript.origin

        await meter.wait_for(1, where=lambda r: r.stage == "transcribe")
        [usage] = [r for r in meter.records if r.stage == "transcribe"]
        assert (usage.units, usage.model, usage.agent) == (1, "test-whisper", agent)

        # Kept beside the recording: the same recording again is not sent twice.
        again = event("again?").model_copy(update={"recordings": [kept.audio_id]})
        await h.send(agent, InboundEvent.model_validate(again.model_dump()))
        assert len(fake.requests) == 1


async def test_a_recording_is_recognised_by_its_bytes_never_its_name(stack: Stack) -> None:
    settings = stack.settings(senses={"max_audio_bytes": 4096})
    with pytest.raises(RecordingRefusedError, match=r"^not an Ogg, MP3, WAV, FLAC, M4A or WebM"):
        await keep_sent_recording(settings=settings, agent="ada", content=b"%PDF-1.7 voice.ogg")
    with pytest.raises(RecordingRefusedError, match=r"more than 4,096 \(senses.max_audio_bytes\)"):
        await keep_sent_recording(settings=settings, agent="ada", content=OGG * 100)


def test_the_endpoint_is_the_operators_else_openais_own_else_none(stack: Stack) -> None:
    assert transcription_endpoint(stack.settings()) is None
    own = transcription_endpoint(stack.settings(openai_api_key="sk-test"))
    assert own is not None and own.base_url == OPENAI_URL and own.provider == "openai"
    assert own.api_key == "sk-test" and own.model == "whisper-1"
    chosen = stack.settings(
        openai_api_key="sk-test",
        senses={"transcription": {"base_url": "http://127.0.0.1:9/v1", "model": "whisper-large"}},
    )
    theirs = transcription_endpoint(chosen)
    assert theirs is not None and theirs.provider == "openai-compatible"
    assert (theirs.base_url, theirs.model, theirs.api_key) == (
        "http://127.0.0.1:9/v1",
        "whisper-large",
        None,
    )
