"""A delegated sandbox task on the wire: what the tool starts, each step, and the report.

``SandboxTaskWorkflow`` runs a small agent loop of its own: the model (task type ``sandbox``)
calls file and command tools that run inside the agent's execution environment, and the loop
ends with a report delivered to the conversation that asked for it. The transcript the model
sees travels in history, bounded by the task's round and output caps.
"""

from __future__ import annotations

from pydantic import Field

from schemas.events import ChannelRef, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.models import Attribution, ChatMessage, ToolCall


class SandboxTaskBounds(Wire):
    """How far one task may go."""

    max_rounds: int = Field(default=8, ge=1, le=50, description="Model rounds, at most.")
    max_seconds: float = Field(
        default=600.0, gt=0, le=86_400, description="Wall-clock budget of the whole task."
    )
    max_output_chars: int = Field(
        default=4000, ge=200, le=100_000, description="Cap on each tool result the model reads."
    )
    max_report_chars: int = Field(
        default=4000, ge=200, le=100_000, description="Cap on the report sent back."
    )


class SandboxTaskInput(Wire):
    """Start a delegated task (``sandbox/{task_id}``)."""

    task_id: Ulid
    agent: AgentHandle
    objective: str = Field(min_length=1, max_length=20_000)
    channel: ChannelRef = Field(description="Where the report is delivered.")
    activation_id: Ulid = Field(description="The activation whose tool call started it.")
    attribution: Attribution = Field(
        default_factory=Attribution, description="The caller's, bound to every model call."
    )
    bounds: SandboxTaskBounds = Field(default_factory=SandboxTaskBounds)


class SandboxThinkInput(Wire):
    """One model round of the task."""

    task_id: Ulid
    agent: AgentHandle
    objective: str
    round: int = Field(ge=0)
    final: bool = Field(default=False, description="The last round: answer in words only.")
    messages: list[ChatMessage] = Field(default_factory=list)


class SandboxThought(Wire):
    """The model's answer for one round: tool calls to run, or its final words."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class SandboxStepInput(Wire):
    """Run one tool call of the task inside the environment."""

    task_id: Ulid
    agent: AgentHandle
    call: ToolCall
    max_output_chars: int = Field(default=4000, ge=200)
    channel: ChannelRef | None = Field(
        default=None, description="The task's conversation: where its memories of changes go."
    )


class SandboxStepResult(Wire):
    """What one tool call did, as the model reads it."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


class SandboxReport(Wire):
    """How the task ended; its text is what the conversation receives."""

    task_id: Ulid
    status: str = Field(description="'done', 'out_of_rounds', 'out_of_time' or 'failed'.")
    text: str
    rounds: int = 0
    steps: int = 0


class DeliverSandboxReportInput(Wire):
    """Send the report to the conversation (once per task)."""

    task_id: Ulid
    agent: AgentHandle
    channel: ChannelRef
    activation_id: Ulid
    report: SandboxReport
