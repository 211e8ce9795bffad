"""Recordings transcribed through an OpenAI-compatible ``/audio/transcriptions`` endpoint.

The endpoint is the operator's (``senses.transcription.base_url``), or OpenAI's own when an
OpenAI key is set and no other endpoint is: the provider's own where it has one. Each
transcript is one usage record (stage ``transcribe``, one unit per recording), priced per
recording from the price table like an image (Appendix C).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from openai import AsyncOpenAI

from activities.senses.kept import Perception
from activities.senses.recordings import AUDIO_SUFFIXES
from observability.metering.hub import MeterHub
from observability.metering.producer import emit_work, work_record
from schemas.pricing import PriceTable
from schemas.senses import OPENAI_URL
from schemas.settings import Settings

STAGE = "transcribe"


@dataclass(frozen=True)
class TranscriptionEndpoint:
    """Where recordings go: the base URL, its key and the model asked."""

    base_url: str
    api_key: str | None
    model: str

    @property
    def provider(self) -> str:
        """Who transcribes, for the usage record."""
        return "openai" if self.base_url.rstrip("/") == OPENAI_URL else "openai-compatible"


def transcription_endpoint(settings: Settings) -> TranscriptionEndpoint | None:
    """The endpoint the configuration names; ``None`` when recordings cannot be transcribed."""
    chosen = settings.senses.transcription
    key = chosen.api_key.get_secret_value() if chosen.api_key else None
    if chosen.base_url:
        return TranscriptionEndpoint(base_url=chosen.base_url, api_key=key, model=chosen.model)
    if settings.openai_api_key is not None:
        own = key or settings.openai_api_key.get_secret_value()
        return TranscriptionEndpoint(base_url=OPENAI_URL, api_key=own, model=chosen.model)
    return None


class Transcriber:
    """Transcribes one recording at a time; the caller bounds how long it may take."""

    def __init__(
        self,
        endpoint: TranscriptionEndpoint,
        *,
        meters: MeterHub | None = None,
        prices: PriceTable | None = None,
        timeout_seconds: float = 10.0,
    ) -> None:
        self.endpoint = endpoint
        self._meters = meters
        self._prices = prices
        self._timeout = timeout_seconds

    async def transcribe(self, path: Path) -> Perception:
        """The words in the recording at ``path``.

        Raises:
            openai.OpenAIError: The endpoint refused, failed or did not answer.
        """
        content = await asyncio.to_thread(path.read_bytes)
        client = AsyncOpenAI(
            base_url=self.endpoint.base_url,
            api_key=self.endpoint.api_key or "unused",
            timeout=self._timeout,
            max_retries=0,  # the turn does not wait for retries: it says it could not hear
        )
        started = time.monotonic()
        try:
            result = await client.audio.transcriptions.create(
                model=self.endpoint.model,
                file=(path.name, content, AUDIO_SUFFIXES[path.suffix]),
                response_format="json",
            )
        finally:
            await client.close()
        emit_work(
            self._meters,
            work_record(
                stage=STAGE,
                provider=self.endpoint.provider,
                model=self.endpoint.model,
                units=1,
                prices=self._prices,
                record_id=f"transcript-{path.stem}",
                latency_ms=(time.monotonic() - started) * 1000,
            ),
        )
        return Perception(model=self.endpoint.model, text=result.text)
