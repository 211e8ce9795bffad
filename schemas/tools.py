"""The tool loop on the wire: generation rounds, tool calls by reference, and their outcomes.

Workflow history carries only IDs and names: a call's arguments, its result and the growing
message list live in PostgreSQL (``tool_calls`` and ``prompt_extensions``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, Field

from schemas.activation import DraftRef, GenerateInput, Generation, PromptRef
from schemas.approvals import ApprovalAsk
from schemas.events import ChannelRef, Trigger, Wire
from schemas.ids import AgentHandle, Ulid

ROUND_STRIDE = 1000
"""Positions of one round in a prompt's extension: the model's turn, then its tool results."""


class ToolContext(Wire):
    """Where a tool runs: whose activation, on which channel, for whom."""

    agent: AgentHandle
    activation_id: Ulid
    conversation_id: Ulid
    channel: ChannelRef
    person_id: Ulid
    participants: list[Ulid] = Field(
        default_factory=list, description="Everyone in the conversation (sensitivity checks)."
    )
    trigger: Trigger = Trigger.MESSAGE


class RespondInput(GenerateInput):
    """One round of the response model (activity ``generation.generate``).

    A superset of :class:`GenerateInput` whose extra fields default to a plain generation
    without tools, so inputs recorded before the tool loop still decode.
    """

    agent: AgentHandle | None = Field(default=None, description="Whose tools to offer.")
    round: int = Field(default=0, ge=0, description="0 for the first call, +1 per tool round.")
    tools: Literal["none", "offer", "final"] = Field(
        default="none",
        description="'offer' the registry's tools; 'final': still advertised, but the model "
        "must answer in words (the loop's bound is reached).",
    )
    draft: bool = Field(
        default=False,
        description="Store the answer in ``drafts`` and return its reference, not its text.",
    )


class ToolCallRef(Wire):
    """A tool call the platform must run; its arguments stay in PostgreSQL."""

    call_id: Ulid
    name: str
    approval: ApprovalAsk | None = Field(
        default=None, description="The call waits for a person's approval before it runs."
    )


class ToolGeneration(Generation):
    """The model's answer for one round: text, or tool calls to run first.

    A superset of :class:`Generation` whose extra fields default to "no tools".
    """

    tool_calls: list[ToolCallRef] = Field(default_factory=list)
    paused: bool = Field(
        default=False, description="A provider-run tool paused the turn: send it again."
    )
    max_rounds: int = Field(default=0, ge=0, description="The configured bound on tool rounds.")
    draft: DraftRef | None = Field(
        default=None, description="The stored answer, when asked for (``text`` is then empty)."
    )


class InvokeToolInput(Wire):
    """Run one stored tool call."""

    call_id: Ulid
    context: ToolContext


class ToolOutcome(Wire):
    """How one call went; the result itself is stored, not carried."""

    call_id: Ulid
    name: str
    ok: bool
    error: str | None = Field(default=None, description="The error the model was shown.")


class ToolCallRecord(Wire):
    """A stored tool call, as introspection and the CLI read it."""

    call_id: Ulid
    activation_id: Ulid
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str | None = None
    is_error: bool = False
    created_at: AwareDatetime
    finished_at: AwareDatetime | None = None


class SelfAssessInput(Wire):
    """Input of the heartbeat's self-assessment, run inside the beat's activation."""

    prompt: PromptRef
    agent: AgentHandle
    activation_id: Ulid
    event_id: Ulid
    participants: list[Ulid] | None = Field(
        default=None,
        description="Everyone present in the beat's conversation: the memories it reads are "
        "fenced by sensitivity against them, like any recall.",
    )


class SelfAssessment(Wire):
    """The template used and how much the assessment says (its text is stored)."""

    template: str
    chars: int = 0
    memories: int = 0
    degraded: bool = False
