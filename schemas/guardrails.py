"""Guardrails over interaction history (spec §4.10): the rules file, its settings, the wire.

An operator writes rules in a YAML file (``GuardrailRuleSet``); each rule pairs one pattern
over history (escalating conflict, repeated prohibited requests, message bursts, prompt
injection, sensitive data in replies) with the actions a firing takes (notify a supervisor,
block the pending reply, end the conversation, cool down a person or channel). Rules run in
the background after each exchange (``GuardrailWorkflow``), unless marked ``blocking``: those
run in the decide step's screen, before the reply is sent.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import AnyHttpUrl, AwareDatetime, Field, field_validator, model_validator

from schemas.events import ChannelRef, Wire
from schemas.ids import AgentHandle, Ulid

RULE_ID_PATTERN = r"^[a-z](?:[a-z0-9-]{0,62}[a-z0-9])?$"


class GuardrailAction(StrEnum):
    """What a firing does."""

    NOTIFY = "notify"
    """An operator inbox entry (the firing row) and, when configured, a webhook POST."""
    BLOCK = "block"
    """Hold the pending reply back (blocking rules only: they run before it is sent)."""
    END_CONVERSATION = "end_conversation"
    """Close the conversation now, as if it had gone idle."""
    COOLDOWN = "cooldown"
    """Stay silent towards a person or on a channel for a period."""


class ConflictPattern(Wire):
    """Hostility rising over a person's last turns of one conversation."""

    kind: Literal["escalating_conflict"]
    turns: int = Field(default=8, ge=2, le=50, description="The person's latest turns read.")
    rising: int = Field(
        default=3,
        ge=2,
        le=20,
        description="This many latest turns, each more hostile than the one before.",
    )
    threshold: float = Field(
        default=0.5, gt=0, le=1, description="Hostility (0 to 1) the latest turn reaches."
    )
    classify: bool = Field(
        default=False,
        description="Score hostility with the model (the gateway's classify task, one call "
        "per evaluation) instead of the lexical score, which stands in if the call fails.",
    )


class ProhibitedPattern(Wire):
    """The same person asking for prohibited things, across conversations and channels."""

    kind: Literal["prohibited_requests"]
    phrases: list[str] = Field(
        min_length=1,
        max_length=200,
        description="Regular expressions (case-insensitive) naming a prohibited request.",
    )
    count: int = Field(default=3, ge=1, le=1000, description="Requests within the window.")
    window_hours: float = Field(default=24, gt=0, le=24 * 90)

    @field_validator("phrases")
    @classmethod
    def _compiles(cls, phrases: list[str]) -> list[str]:
        for phrase in phrases:
            try:
                re.compile(phrase, re.IGNORECASE)
            except re.error as err:
                raise ValueError(f"phrase {phrase!r} is not a regular expression: {err}") from None
        return phrases


class BurstPattern(Wire):
    """Many inbound messages in a short window, from one person or on one channel."""

    kind: Literal["message_burst"]
    per: Literal["person", "channel"] = "person"
    messages: int = Field(default=12, ge=2, le=10_000)
    window_seconds: int = Field(default=60, ge=1, le=86_400)


InjectionSource = Literal["inbound", "tool_results"]


class InjectionPattern(Wire):
    """Prompt-injection attempts in what people write or what tools return."""

    kind: Literal["prompt_injection"]
    sources: list[InjectionSource] = Field(
        default_factory=lambda: list[InjectionSource](["inbound", "tool_results"]), min_length=1
    )
    min_signals: int = Field(default=1, ge=1, le=10, description="Distinct signals needed.")


SensitiveKind = Literal["card_number", "api_key", "private_key", "email", "phone"]


class SensitivePattern(Wire):
    """Sensitive data in the agent's reply."""

    kind: Literal["sensitive_data"]
    detect: list[SensitiveKind] = Field(
        default_factory=lambda: list[SensitiveKind](["card_number", "api_key", "private_key"]),
        min_length=1,
    )
    replies: int = Field(
        default=4,
        ge=1,
        le=20,
        description="The reply is read with the agent's previous replies in the conversation, "
        "this many in all, as one text: a secret split across replies is still found (it "
        "fires only when the reply being checked carries part of it).",
    )


Pattern = Annotated[
    ConflictPattern | ProhibitedPattern | BurstPattern | InjectionPattern | SensitivePattern,
    Field(discriminator="kind"),
]


class CooldownSpec(Wire):
    """Whom a cooldown silences the agent towards, and for how long."""

    scope: Literal["person", "channel"] = "person"
    minutes: float = Field(gt=0, le=7 * 24 * 60)


class GuardrailRule(Wire):
    """One pattern and what its firing does."""

    id: Annotated[str, Field(pattern=RULE_ID_PATTERN, description="Short slug, unique.")]
    description: str = Field(default="", max_length=500)
    enabled: bool = True
    pattern: Pattern
    actions: list[GuardrailAction] = Field(min_length=1)
    blocking: bool = Field(
        default=False,
        description="Evaluate before the reply is sent (in the decide screen); otherwise in "
        "the background after the exchange.",
    )
    cooldown: CooldownSpec | None = None
    message: str = Field(
        default="I'd rather not continue with this right now.",
        min_length=1,
        max_length=300,
        description="The reason the agent gives when this rule holds a reply back.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if GuardrailAction.COOLDOWN in self.actions and self.cooldown is None:
            raise ValueError("action 'cooldown' needs a 'cooldown' entry (scope and minutes)")
        if GuardrailAction.BLOCK in self.actions and not self.blocking:
            raise ValueError(
                "action 'block' needs 'blocking: true' (a background rule runs after the reply "
                "is sent)"
            )
        if len(set(self.actions)) != len(self.actions):
            raise ValueError("an action is listed twice")
        return self


class GuardrailRuleSet(Wire):
    """The rules file (YAML): ``version: 1`` and a list of rules."""

    version: Literal[1] = 1
    rules: list[GuardrailRule] = Field(default_factory=list, max_length=1000)

    @model_validator(mode="after")
    def _unique(self) -> Self:
        seen: set[str] = set()
        for rule in self.rules:
            if rule.id in seen:
                raise ValueError(f"rule id {rule.id!r} is used twice")
            seen.add(rule.id)
        return self

    def active(self, *, blocking: bool) -> list[GuardrailRule]:
        """The enabled rules that run in the screen (``blocking``) or in the background."""
        return [r for r in self.rules if r.enabled and r.blocking is blocking]


class GuardrailSettings(Wire):
    """Where the rules come from and where a supervisor is told (``PERSYN_GUARDRAILS__*``)."""

    enabled: bool = Field(default=True, description="Evaluate guardrails at all.")
    rules_path: Path | None = Field(
        default=None, description="The rules file (YAML); default: the shipped rule set."
    )
    webhook_url: AnyHttpUrl | None = Field(
        default=None, description="POSTed a JSON body for each firing whose rule notifies."
    )
    webhook_timeout_seconds: float = Field(default=10, gt=0, le=120)


class GuardrailInput(Wire):
    """Input of ``GuardrailWorkflow``: one exchange to evaluate the background rules on."""

    activation_id: Ulid
    agent: AgentHandle
    conversation_id: Ulid
    channel: ChannelRef
    person_id: Ulid | None = None
    inbound_turn_id: str = Field(min_length=1, max_length=64)
    reply_turn_id: str | None = Field(default=None, max_length=64)
    at: AwareDatetime = Field(description="The exchange's moment: windows end here.")
    evaluation: GuardrailEvaluation | None = Field(
        default=None,
        description="What the conversation's evaluation found (the run acts on it); None: the "
        "run evaluates itself (runs started before the conversation evaluated).",
    )


class GuardrailFiring(Wire):
    """One firing of one rule, as recorded (its row is the operator's inbox entry)."""

    firing_id: Ulid
    rule_id: str
    actions: list[GuardrailAction]
    evidence: list[str] = Field(default_factory=list, description="Turn (or tool call) IDs.")
    summary: str
    person_id: str | None = None
    channel_key: str | None = None
    conversation_id: str | None = None
    activation_id: str | None = None
    cooldown: CooldownSpec | None = None
    fired_at: AwareDatetime


class GuardrailEvaluation(Wire):
    """What the background evaluation found: the recorded firings and the rules that raised."""

    firings: list[GuardrailFiring] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list, description="Rules that raised (skipped).")


class NotifySupervisorInput(Wire):
    """Input of the webhook notification of one firing."""

    firing_id: Ulid


class NotifySupervisorResult(Wire):
    """Whether a webhook was called (none configured: ``delivered`` is false)."""

    delivered: bool = False
    status: int | None = None


class CoolDownInput(Wire):
    """Input of the cooldown action: silence towards a person or on a channel until a time."""

    agent: AgentHandle
    firing_id: Ulid
    rule_id: str
    scope: Literal["person", "channel"]
    key: str = Field(min_length=1, max_length=200)
    until: AwareDatetime


class EndConversationRequest(Wire):
    """Signal to a conversation: close now (a guardrail fired, or an operator asked)."""

    reason: str = Field(min_length=1, max_length=300)
    firing_id: Ulid | None = None


class GuardrailResult(Wire):
    """Result of ``GuardrailWorkflow``: the rules that fired and what was done."""

    fired: list[str] = Field(default_factory=list)
    done: list[str] = Field(default_factory=list, description="'rule:action' for each action.")
    failed: list[str] = Field(default_factory=list)


class CoolDownResult(Wire):
    """The cooldown in force after the action (a later end already set is kept)."""

    scope: Literal["person", "channel"]
    key: str
