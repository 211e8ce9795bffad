"""Admission: everything an event needs before its model call, in one local activity.

The agent's inbox admits the event in its critical section: the speaker resolved to a person,
the conversation recorded when it is new, the person's turn written through, the window read,
the channel's token budget asked, and the prompt assembled. Then the agent starts the
activation itself and tells the conversation about the turn beside it, so the model call waits
for two workflow tasks (the agent's and the activation's) instead of three in turn.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, Field

from schemas.activation import PromptRef
from schemas.agents import DeliberationMode
from schemas.dialog import DialogTurn
from schemas.events import InboundEvent, Wire
from schemas.ids import AgentHandle, Ulid

WINDOW_TURNS = 40
"""Turns of verbatim dialog a conversation keeps in its window and a prompt is given."""


class AdmitInput(Wire):
    """Admit one event into a conversation and prepare its activation."""

    agent: AgentHandle
    event: InboundEvent
    conversation_id: Ulid
    opening: bool = Field(description="The conversation is new: record it before the turn.")
    activation_id: Ulid
    at: AwareDatetime = Field(description="The agent's workflow time: the turn's time.")
    window_turns: int = Field(default=WINDOW_TURNS, gt=0, le=500)


class Admission(StrEnum):
    """What became of the event."""

    ADMITTED = "admitted"
    CLOSED = "closed"  # the conversation closed first: admit it to a fresh one


class Admitted(Wire):
    """An admitted event: its person, its turn, its window and (normally) its prompt."""

    admission: Admission
    conversation_id: Ulid | None = Field(
        default=None,
        description="The conversation the turn is in: the one asked for, or the one an attempt "
        "of the same workflow task that never completed admitted it to.",
    )
    person_id: Ulid | None = None
    person_name: str = ""
    turn: DialogTurn | None = None
    window_turn_ids: list[Ulid] = Field(default_factory=list)
    participants: list[Ulid] = Field(default_factory=list)
    withheld: str | None = Field(
        default=None, description="Why no reply may be generated (a paced channel's budget)."
    )
    prompt: PromptRef | None = Field(
        default=None,
        description="The assembled prompt; None when assembly failed here (the activation "
        "assembles it itself, under its own retries).",
    )
    prompt_error: str | None = None
    deliberation: DeliberationMode | None = Field(
        default=None, description="The agent's deliberation mode, read with its profile."
    )
