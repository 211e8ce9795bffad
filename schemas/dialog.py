"""Verbatim dialog: the turns of a conversation, as the workflow window and the store hold them."""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, Field

from schemas.events import Wire
from schemas.ids import Ulid


class Role(StrEnum):
    """Who produced a turn."""

    PERSON = "person"
    AGENT = "agent"


class DialogTurn(Wire):
    """One verbatim utterance. For a person's turn, ``turn_id`` is the inbound event's ID."""

    turn_id: Ulid
    conversation_id: Ulid
    role: Role
    speaker_id: str = Field(description="The person's ID, or the agent's handle.")
    speaker_name: str
    text: str
    at: AwareDatetime
