"""Where an agent's recordings are kept, and what counts as one.

The recordings people send live under ``home/audio/{agent}/``, each named by its ULID with
its type's suffix, beside the transcript written of it (``{id}.transcript.json``). A recording
is recognised by its first bytes, never by a name or a declared type: the kinds OpenAI's
transcription endpoint takes.
"""

from __future__ import annotations

from pathlib import Path

AUDIO_SUFFIXES = {
    ".ogg": "audio/ogg",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".flac": "audio/flac",
    ".m4a": "audio/mp4",
    ".webm": "audio/webm",
}
"""The kinds kept, by the suffix they are kept under (and sent to the endpoint under)."""


class NotARecordingError(ValueError):
    """Bytes that are not an Ogg, MP3, WAV, FLAC, M4A or WebM recording."""


def recording_suffix(content: bytes) -> str:
    """The suffix ``content`` is kept under, from its signature.

    Raises:
        NotARecordingError: Not a recording of a kind the transcription endpoint takes.
    """
    if content.startswith(b"OggS"):
        return ".ogg"
    if content.startswith(b"ID3") or (
        len(content) > 1 and content[0] == 0xFF and content[1] & 0xE0 == 0xE0
    ):
        return ".mp3"
    if content[:4] == b"RIFF" and content[8:12] == b"WAVE":
        return ".wav"
    if content.startswith(b"fLaC"):
        return ".flac"
    if content[4:8] == b"ftyp":
        return ".m4a"
    if content.startswith(b"\x1a\x45\xdf\xa3"):
        return ".webm"
    raise NotARecordingError("not an Ogg, MP3, WAV, FLAC, M4A or WebM recording")


def find_recording(root: Path, agent: str, audio_id: str) -> Path | None:
    """The kept recording ``audio_id`` of ``agent``, if any."""
    for suffix in AUDIO_SUFFIXES:
        path = root / agent / f"{audio_id}{suffix}"
        if path.is_file():
            return path
    return None
