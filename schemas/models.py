"""The model gateway's vocabulary: task types, bindings, requests, responses and usage records."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, Literal

from pydantic import AwareDatetime, Field, ModelWrapValidatorHandler, model_validator

from schemas.events import Wire, first_unstorable
from schemas.text import storable


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
    SANDBOX = "sandbox"
    """A delegated sandbox task's own agent loop (metered apart from the reply)."""
    OBSERVE = "observe"
    """Facts about people: extraction, reconciliation and the dossier (background work)."""
    EMOTION = "emotion"
    """The agent's emotional state after an exchange, and whether a request is optional."""
    RESIDUE = "residue"
    """What a conversation left behind, synthesised as it closes (background work)."""
    FOLD = "fold"
    """Records folded into a recollection of the next level (background work)."""
    RECALL = "recall"
    """The memories found for an input, told as one account (on the reply's path)."""
    CAPTION = "caption"
    """A picture a person sent, described in words by a vision model (at admission)."""
    VOICE = "voice"
    """A live call's spoken answer: the fastest model, no tools, streamed (docs/channels.md)."""


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
    vision: bool = Field(
        default=False,
        description="The model reads pictures: only a binding that says so captions them.",
    )


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

    @classmethod
    def as_sent(cls, call_id: str, name: str, value: object, text: str | None = None) -> ToolCall:
        """The call a model sent, kept whatever it holds, so one bad call cannot fail a turn.

        Arguments that are a JSON object of storable text are parsed; anything else (not an
        object, or holding a NUL or a lone surrogate) is kept as ``raw_arguments``, for the
        platform to tell the model what to fix. Unstorable characters in the text, the name or
        the ID become U+FFFD: they must survive the database to reach the model.
        """
        ident, label = storable(call_id) or "call", storable(name)
        if isinstance(value, dict) and first_unstorable(value, "") is None:
            return cls(id=ident[:200], name=label, arguments=value)
        raw = text if text is not None else json.dumps(value, ensure_ascii=False, default=str)
        return cls(id=ident[:200], name=label, raw_arguments=storable(raw))


class ImagePart(Wire):
    """A picture sent to a vision model inside a user message, as base64 of its bytes."""

    media_type: Literal["image/png", "image/jpeg", "image/webp"]
    data: str = Field(min_length=1, description="The picture's bytes, base64-encoded.")


class ChatMessage(Wire):
    """One message of a prompt after the system instruction.

    A ``user`` message may carry ``images`` for a vision model (the caption task only: prompts
    that are stored never hold them). Tool use adds two shapes: an ``assistant`` message
    carrying ``tool_calls`` (and, when a provider ran tools itself, its ``provider_content``
    blocks to send back verbatim), and a ``tool`` message carrying one call's result.
    """

    role: Literal["user", "assistant", "tool", "system"]
    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = Field(default=None, description="The call a tool message answers.")
    is_error: bool = Field(default=False, description="A tool message reporting a failure.")
    provider_content: list[dict[str, Any]] | None = None
    images: list[ImagePart] = Field(
        default_factory=list, description="Pictures after the text (user messages only)."
    )


def instructions(system: str, messages: Sequence[Mapping[str, Any]]) -> str:
    """Everything a stored prompt told the model as instructions and context.

    The system instruction, and the system messages a plan puts after the dialog
    (``CallPlan.context_after_dialog``): where a block was shown, whichever place it took.
    ``messages`` are the prompt's stored messages (``PromptRow.messages``).
    """
    parts = [system, *(str(m.get("content", "")) for m in messages if m.get("role") == "system")]
    return "\n\n".join(part for part in parts if part)


class Sampling(Wire):
    """How a model samples its reply; unset fields leave the provider's default.

    ``repeat_penalty``, ``top_k`` and ``min_p`` are llama.cpp's own: only a provider that
    speaks to llama.cpp sends them.
    """

    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    top_k: int | None = Field(default=None, ge=0)
    min_p: float | None = Field(default=None, ge=0, le=1)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    repeat_penalty: float | None = Field(default=None, gt=0, le=3)
    stop: list[str] = Field(default_factory=list, max_length=4)


class GrammarLimits(Wire):
    """What a grammar-constrained model can compile: every schema sent to it is clamped.

    llama.cpp expands a bounded repetition (``maxLength`` 8000) into that many grammar rules
    and gives up ("exceeds sane defaults"); llama-cpp-python then crashes its process.
    """

    max_string_chars: int = Field(default=500, ge=1, le=2000)
    max_array_items: int = Field(default=16, ge=1, le=100)


class StagePlan(Wire):
    """How one task type runs on a provider."""

    run: bool = Field(
        default=True,
        description="False: the stage is skipped on this provider where skipping is safe: "
        "critique and refinement do not run, the decide step follows its rule (addressed: "
        "speak); other stages always run.",
    )
    max_input_tokens: int | None = Field(
        default=None,
        gt=0,
        description="Cap on the prompt assembled for this stage (a small model reads a short "
        "prompt faster and better); the binding's context window shrinks to it.",
    )
    max_output_tokens: int | None = Field(
        default=None, gt=0, description="Cap on the reply's tokens (the request may ask less)."
    )
    max_string_chars: int | None = Field(
        default=None,
        gt=0,
        description="Cap on every string of a structured reply: short verdicts stay short.",
    )
    max_transcript_tokens: int | None = Field(
        default=None,
        ge=0,
        description="Memory formation (summarize, rate, classify): cap on the dialog its "
        "prompt quotes, latest turns kept whole; 0 quotes none, so the memory is judged from "
        "its summary alone.",
    )


class CallPlan(Wire):
    """Which stages run on a provider, how long each may be, and how its replies are sampled."""

    prose: Sampling = Field(
        default_factory=Sampling, description="Sampling of free-text replies (respond, refine)."
    )
    structured: Sampling = Field(
        default_factory=Sampling,
        description="Sampling of schema-constrained replies; penalties would fight the JSON.",
    )
    stages: dict[TaskType, StagePlan] = Field(default_factory=dict)
    grammar: GrammarLimits | None = Field(
        default=None, description="Set for grammar-constrained providers: schemas are clamped."
    )
    cut_repetition: bool = Field(
        default=False,
        description="Cut a free-text reply, and a structured reply's text fields, where a "
        "sentence repeats.",
    )
    end_on_sentence: bool = Field(
        default=False,
        description="A free-text reply stopped by its token cap ends at its last full sentence.",
    )
    offer_tools: bool = Field(default=True, description="False: tools are never advertised.")
    check_recollections: bool = Field(
        default=False,
        description="Replace a reply that claims a recollection with nothing behind it in its "
        "prompt by an honest 'I don't remember' (for models too small to be asked).",
    )
    omit_context: list[str] = Field(
        default_factory=list,
        description="Context sources whose blocks this plan's model is not shown (by name); "
        "what they leave for the platform (the confirmations of what was done) is kept.",
    )
    context_after_dialog: bool = Field(
        default=False,
        description="Put what changes every turn (recalled memories, facts, the clock) after "
        "the dialog, just before the newest message, so a server that caches prompt prefixes "
        "reuses the instructions and the dialog from one turn to the next.",
    )
    confirm_done: bool = Field(
        default=False,
        description="Add to the reply what the platform did at the person's request this turn "
        "(a reminder set, a fact kept), for models too small to be relied on to say it.",
    )
    greet_plainly: bool = Field(
        default=False,
        description="A call that opens in silence is greeted with the platform's own line (the "
        "agent's name and the caller's), not the fast model's words (for models too small to "
        "greet without repeating the instruction).",
    )
    judge_sensitivity: bool = Field(
        default=True,
        description="False: a memory's sensitivity is not the classifier's to set; it is "
        "private (who took part), raised only by the channel's floor or the operator.",
    )

    def stage(self, task: TaskType) -> StagePlan:
        """The plan of ``task`` (the defaults when the plan does not name it)."""
        return self.stages.get(task) or StagePlan()


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
    sampling: Sampling | None = Field(
        default=None,
        description="Set by the gateway from the provider's call plan; ``temperature`` above "
        "wins over the plan's.",
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

    @model_validator(mode="wrap")
    @classmethod
    def _replace_unstorable(
        cls, data: object, handler: ModelWrapValidatorHandler[ModelResponse]
    ) -> ModelResponse:
        # What a model wrote is output, not a client's input: a NUL in it is replaced, so the
        # reply reaches the person instead of failing every retry of the call that got it.
        # A wrap, so it runs before the wire check (also a wrap: pydantic runs every wrap
        # validator before any "before" one, the subclass's outermost).
        if isinstance(data, dict) and isinstance(data.get("text"), str):
            data = {**data, "text": storable(data["text"])}
        return handler(data)

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
    occurred_at: AwareDatetime
    latency_ms: float = 0.0
