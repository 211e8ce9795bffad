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


class ChatMessage(Wire):
    """One message of a prompt after the system instruction."""

    role: Literal["user", "assistant"]
    content: str


class ModelRequest(Wire):
    """A text-in/text-out exchange with a model."""

    task: TaskType
    system: str
    messages: list[ChatMessage]
    max_output_tokens: int | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    response_schema: dict[str, Any] | None = Field(
        default=None, description="JSON Schema the reply must satisfy (schema-constrained output)."
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
