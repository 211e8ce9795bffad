"""The model gateway's vocabulary: task types, bindings, requests, responses and usage records."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from schemas.events import Wire


class TaskType(StrEnum):
    """A pipeline stage that calls a model; the registry maps each to a provider and model."""

    RESPOND = "respond"
    CRITIQUE = "critique"
    REFINE = "refine"
    SUMMARIZE = "summarize"
    RATE = "rate"
    CLASSIFY = "classify"
    DECIDE = "decide"
    EMBED = "embed"


class ProviderName(StrEnum):
    """Model providers the gateway can call."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    OPENAI_COMPATIBLE = "openai-compatible"
    LOCAL = "local"
    SCRIPTED = "scripted"


class ModelTier(StrEnum):
    """Cheap/fast versus strong models: a low-cardinality slice for cost dashboards."""

    FAST = "fast"
    STRONG = "strong"


class ModelBinding(Wire):
    """Where one task type runs."""

    provider: ProviderName
    model: str
    context_window: int = Field(gt=0, description="Tokens the model can attend to.")
    max_output_tokens: int = Field(default=1024, gt=0)
    tier: ModelTier = ModelTier.STRONG


class ToolExecutor(StrEnum):
    """Who runs a tool: the platform (a local handler) or the model provider (inline)."""

    PLATFORM = "platform"
    PROVIDER = "provider"


class ToolSpec(Wire):
    """A tool as advertised to a model: name, description and the schemas of its input/output.

    Provider-executed tools (``executor=provider``) have no local handler: they are advertised
    only to ``provider`` in its own form (``provider_type`` plus ``provider_config``) and the
    provider returns their result inline.
    """

    name: str = Field(pattern=r"^[a-zA-Z][a-zA-Z0-9_-]{0,63}$")
    description: str
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    executor: ToolExecutor = ToolExecutor.PLATFORM
    provider: ProviderName | None = Field(
        default=None, description="The only provider a provider-executed tool is offered to."
    )
    provider_type: str | None = Field(
        default=None, description="The provider's own tool type, e.g. 'web_search_20250305'."
    )
    provider_config: dict[str, Any] = Field(default_factory=dict)


class ToolCall(Wire):
    """A model's request to run a tool.

    ``raw_arguments`` keeps the model's text when it was not a JSON object, so the platform
    can return the parse error to the model instead of guessing.
    """

    id: str = Field(min_length=1, max_length=200, description="The provider's call ID.")
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None


class ChatMessage(Wire):
    """One message of a prompt after the system instruction.

    Tool use adds two shapes: an ``assistant`` message carrying ``tool_calls`` (and, when a
    provider ran tools itself, its ``provider_content`` blocks to send back verbatim), and a
    ``tool`` message carrying one call's result.
    """

    role: Literal["user", "assistant", "tool"]
    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = Field(default=None, description="The call a tool message answers.")
    is_error: bool = Field(default=False, description="A tool message reporting a failure.")
    provider_content: list[dict[str, Any]] | None = None


class ModelRequest(Wire):
    """A text-in/text-out exchange with a model, optionally offering tools."""

    task: TaskType
    system: str
    messages: list[ChatMessage]
    max_output_tokens: int | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    response_schema: dict[str, Any] | None = Field(
        default=None, description="JSON Schema the reply must satisfy (schema-constrained output)."
    )
    tools: list[ToolSpec] = Field(
        default_factory=list,
        description="Tools the model may call; they precede the system instruction in the "
        "cacheable prefix, so keep their order stable.",
    )
    tool_choice: Literal["auto", "none"] = Field(
        default="auto",
        description="'none' keeps the tools advertised (an exchange holding tool calls needs "
        "them, and the cached prefix stays) but asks for words only.",
    )


class TokenUsage(Wire):
    """Tokens one call consumed.

    ``input_tokens`` counts every prompt token, cached ones included; the cached parts are
    also reported as ``cached_read_tokens`` and ``cached_write_tokens``. Cost is therefore
    (input - read - write) at the base input price, plus reads and writes at their prices.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_read_tokens: int = 0
    cached_write_tokens: int = 0


class ModelResponse(Wire):
    """A completed exchange."""

    text: str
    model: str
    provider: ProviderName
    finish_reason: str | None = None
    usage: TokenUsage = Field(default_factory=TokenUsage)
    latency_ms: float = 0.0
    tool_calls: list[ToolCall] = Field(default_factory=list)
    provider_content: list[dict[str, Any]] | None = Field(
        default=None,
        description="The reply's raw content blocks when the provider ran tools itself; sent "
        "back verbatim to resume a paused turn.",
    )


class Attribution(Wire):
    """Whose work a model call served; carried implicitly from workflows to activities."""

    agent: str | None = None
    channel: str | None = None
    conversation: str | None = None
    activation: str | None = None
    trigger: str | None = None


class UsageRecord(Wire):
    """One completed billable unit of work (Appendix C), counted once by ``record_id``."""

    record_id: str
    stage: str
    provider: str
    model: str
    tier: ModelTier = ModelTier.STRONG
    input_tokens: int = 0
    output_tokens: int = 0
    cached_read_tokens: int = 0
    cached_write_tokens: int = 0
    units: int = Field(default=0, description="Non-token units (e.g. images) for priced work.")
    cost_usd: float | None = Field(default=None, description="Pre-computed cost, if known.")
    agent: str | None = None
    channel: str | None = None
    conversation: str | None = None
    activation: str | None = None
    occurred_at: datetime
    latency_ms: float = 0.0
