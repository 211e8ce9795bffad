"""The senses: pictures and recordings people send, perceived as text (spec §4 step 1).

A picture is captioned by a vision model from the registry (the ``caption`` task); a
recording is transcribed through an OpenAI-compatible ``/audio/transcriptions`` endpoint. What
either says enters the person's turn as text, fenced, with the model that wrote it; the
original stays kept under its ID (``docs/channels.md``, Pictures and recordings).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr

OPENAI_URL = "https://api.openai.com/v1"
"""OpenAI's own endpoint: recordings are transcribed there when an OpenAI key is set and no
other endpoint is."""


class TranscriptionSettings(BaseModel):
    """Where recordings are transcribed (``PERSYN_SENSES__TRANSCRIPTION__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint (ends before /audio/transcriptions); unset: "
        "OpenAI's own when OPENAI_API_KEY is set, else recordings are not transcribed.",
    )
    api_key: SecretStr | None = Field(
        default=None, description="Its bearer token (default: OPENAI_API_KEY for OpenAI's own)."
    )
    model: str = Field(default="whisper-1", min_length=1, max_length=200)


class SensesSettings(BaseModel):
    """How pictures and recordings are taken in and perceived (``[senses]`` in persyn.toml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    perceive_seconds: float = Field(
        default=8.0,
        gt=0,
        le=10,
        description="The longest admission waits for captions and transcripts (they run at "
        "once); past it the turn goes on saying the picture or recording could not be "
        "perceived. At most 10 s: admission's own step is bounded at 15 s.",
    )
    max_caption_chars: int = Field(default=1500, ge=100, le=8000)
    max_transcript_chars: int = Field(default=8000, ge=100, le=16000)
    max_pixels: int = Field(
        default=50_000_000,
        ge=1,
        le=400_000_000,
        description="The most pixels a sent picture may declare (read from its header, never "
        "by decoding it): a small file declaring a vast picture is refused at the door.",
    )
    max_caption_bytes: int = Field(
        default=5_000_000,
        ge=1024,
        le=50_000_000,
        description="Pictures larger than this are kept but not sent to the vision model "
        "(Anthropic takes 5 MB an image): the turn says it was too large to describe.",
    )
    max_audio_bytes: int = Field(
        default=25_000_000,
        ge=1024,
        le=50_000_000,
        description="The largest recording a person may send (OpenAI transcribes up to 25 MB).",
    )
    transcription: TranscriptionSettings = Field(default_factory=TranscriptionSettings)
