"""Imported dialog on the wire: one line of the JSONL import format, and the import's report.

The format is documented in ``docs/import-format.md``; this model is its contract.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from schemas.events import ChannelRef, Name, Wire
from schemas.ids import AgentHandle
from schemas.text import MessageText

Key = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
Tag = Annotated[str, StringConstraints(min_length=1, max_length=64, strip_whitespace=True)]


def _utc(value: datetime) -> datetime:
    # A time without a zone is taken as UTC, so the same file always imports the same way.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class ImportFormat(StrEnum):
    """How the file is laid out."""

    AUTO = "auto"
    JSONL = "jsonl"
    LOCOMO = "locomo"


class ImportSpeaker(Wire):
    """Who said it, as the source knows them."""

    id: Name
    name: Name | None = None


class ImportLine(Wire):
    """One turn: one JSON object per line of a JSONL import file."""

    conversation: Key = Field(
        description="The conversation's ULID, or any key that groups its turns (e.g. a thread id)."
    )
    channel: ChannelRef
    speaker: ImportSpeaker
    role: Literal["person", "agent"] = "person"
    text: MessageText
    at: Annotated[datetime, AfterValidator(_utc)]
    tags: list[Tag] = Field(default_factory=list, max_length=20)
    key: Key | None = Field(
        default=None, description="The turn's own id in the source; kept as its source_ref."
    )


class ImportReport(Wire):
    """What an import did. Re-importing the same file reports zero turns added."""

    agent: AgentHandle
    format: ImportFormat
    conversations: int = Field(description="Conversations in the file.")
    conversations_added: int = 0
    turns: int = Field(description="Turns in the file.")
    turns_added: int = 0
    turns_embedded: int = 0
    conversation_ids: list[str] = Field(
        default_factory=list, description="Conversations that gained turns, oldest first."
    )
    notice: str | None = Field(
        default=None, description="Why some turns were stored without an embedding."
    )
