"""Inputs and results of the store activities the orchestration calls."""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from schemas.dialog import DialogTurn
from schemas.events import ChannelRef, Speaker, Wire
from schemas.ids import AgentHandle, Ulid


class ResolveSpeakerInput(Wire):
    """Find or create the person behind a speaker on a channel (lookup: service+channel+id)."""

    agent: AgentHandle
    channel: ChannelRef
    speaker: Speaker
    seen_at: AwareDatetime


class ResolvedSpeaker(Wire):
    """The person a speaker resolved to."""

    person_id: Ulid
    person_name: str
    created: bool = False


class AgentLookupInput(Wire):
    """Input of the agent lookup."""

    handle: AgentHandle


class AgentProfile(Wire):
    """The parts of an agent's record the orchestration needs."""

    handle: AgentHandle
    name: str
    idle_minutes: float
    deliberation: str
    exists: bool = True


class OpenConversationInput(Wire):
    """Record a conversation's opening."""

    conversation_id: Ulid
    agent: AgentHandle
    channel: ChannelRef
    opened_at: AwareDatetime


class RecordTurnInput(Wire):
    """Write one verbatim turn through to PostgreSQL (idempotent by turn ID)."""

    agent: AgentHandle
    channel: ChannelRef
    turn: DialogTurn


class CloseConversationInput(Wire):
    """Record a conversation's closing."""

    conversation_id: Ulid
    closed_at: AwareDatetime
    reason: str
    turns: int
    participants: list[Ulid]
    last_input: Ulid | None = Field(
        default=None,
        description="The newest person turn the conversation was told of: a guarded close "
        "(admission.close) is refused while a newer one was admitted.",
    )


class Done(Wire):
    """An acknowledgement with nothing else to say."""

    ok: bool = True
