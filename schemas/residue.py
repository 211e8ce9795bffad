"""Residue: what recent conversations left behind, in at most seven terse, descriptive items.

Facts and unresolved state ("Ines's visit on Friday was not confirmed"), never instructions or
plans. A synthesis pass writes them when a conversation ends; the agent never writes them
directly. An item expires ``expire_days`` after it was last carried forward; carried forward
verbatim it is reinforced (its age kept), reworded it is a new item (its age reset).
"""

from __future__ import annotations

import re

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from schemas.events import ChannelRef, Wire
from schemas.ids import AgentHandle, Ulid

MAX_ITEMS = 7
"""phi's cap, the default and the most an operator may set."""


class ResidueSettings(BaseModel):
    """Residue (``PERSYN_RESIDUE__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    max_items: int = Field(default=MAX_ITEMS, ge=1, le=MAX_ITEMS)
    expire_days: float = Field(
        default=3.0, gt=0, le=60, description="An item lasts this long after it was last carried."
    )
    item_chars: int = Field(default=200, ge=40, le=500, description="The longest item kept.")


class ResidueInput(Wire):
    """Input of ``ResidueWorkflow`` and its one step: the conversation that just ended."""

    residue_id: Ulid = Field(description="The run's ID: a retried step finds its own write.")
    agent: AgentHandle
    conversation_id: Ulid
    channel: ChannelRef


class ResidueResult(Wire):
    """What one synthesis pass did."""

    carried: int = Field(default=0, description="Items carried forward verbatim: reinforced.")
    written: int = Field(default=0, description="New or reworded items: their age starts now.")
    refused: int = Field(default=0, description="Items refused as instructions or plans.")
    retired: int = Field(default=0, description="Items past the cap, retired.")
    skipped: str | None = Field(default=None, description="Why nothing was synthesised.")


class ResidueItem(BaseModel):
    """One live item."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    since: AwareDatetime = Field(description="When it was written or last reworded: its age.")
    last_carried_at: AwareDatetime
    carried: int = Field(description="How many passes carried it forward verbatim.")


_DIRECTIVE = re.compile(
    r"^\s*(?:please\s+|always\s+|never\s+|don'?t\s+|do\s+not\s+)?"
    r"(?:ignore|disregard|forget|always|never|remember|remind|make\s+sure|be\s+sure|ensure|tell|"
    r"ask|send|call|reply|respond|say|do|don'?t|stop|start|keep|follow|obey|act|pretend|"
    r"note\s+that|check|follow\s+up|mention|bring\s+up|avoid|use|try)\b",
    re.IGNORECASE,
)
_SECOND_PERSON = re.compile(
    r"\byou\s+(?:must|should|shall|need\s+to|have\s+to|ought\s+to|will|are\s+to)\b|"
    r"\b(?:system|assistant|developer|operator)\s*:|\binstructions?\b|\bprompt\b",
    re.IGNORECASE,
)
_PLAN = re.compile(
    r"^\s*(?:i|we)\s+(?:will|shall|should|must|need\s+to|have\s+to|plan\s+to|intend\s+to|"
    r"am\s+going\s+to|are\s+going\s+to)\b|^\s*(?:i'll|we'll|let'?s|next\s+step|to\s+do|todo)\b",
    re.IGNORECASE,
)


def instruction_shaped(text: str) -> bool:
    """Whether ``text`` reads as an instruction or a plan rather than a description.

    Residue describes ("Ines's visit on Friday was not confirmed"); it never directs ("Ask
    Ines about Friday", "You must...", "SYSTEM: ...") or plans ("I will ask Ines"), since a
    standing block of directives is exactly what an injected instruction would want to become.
    """
    return bool(_DIRECTIVE.match(text) or _SECOND_PERSON.search(text) or _PLAN.match(text))


def same_item(a: str, b: str) -> bool:
    """Whether two items say the same words (case, spacing and end punctuation aside)."""
    return _folded(a) == _folded(b)


def _folded(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".!;")
