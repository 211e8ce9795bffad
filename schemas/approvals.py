"""Tool approvals: which tool calls wait for a person's yes, and the decision on the wire.

A call that needs approval waits in its activation until someone approves or refuses it (the
``decide_approval`` update, ``persyn approvals``, the web API), or until its deadline passes,
when it is refused by default. :func:`needs_approval` is the policy: a pure function of the
settings and of what the worker found out about the call (:class:`CallFacts`). The settings sit
under ``[approvals]`` in ``persyn.toml``; per agent under ``[approvals.agents.<handle>]``.
"""

from __future__ import annotations

from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from schemas.autonomy import SELF_SERVICE
from schemas.events import Wire
from schemas.ids import AgentHandle, Ulid, check_handle
from schemas.peers import AGENT_SERVICE
from schemas.text import Name, clean_text, text_json_schema

ToolRule = Literal["always", "never"]
"""Per tool: ``always`` ask before it runs, or ``never`` ask (the operator allows it outright)."""

DEFAULT_TIMEOUT_SECONDS = 600.0
"""Ten minutes: how long a call waits for a decision before it is refused by default."""

MAX_TIMEOUT_SECONDS = 720.0
"""Twelve minutes at most: the activation holds its agent's lock while it waits, and the whole
run must end within its 18-minute run timeout (``contract.policies.ACTIVATION_RUN_LIMIT``)."""

MAX_WHY_CHARS = 500
"""The longest reason a decision may give."""

SUMMARY_CHARS = 600
"""How much of a call's arguments an approval shows (the rest is cut, and says so)."""


def _rules(value: dict[str, ToolRule]) -> dict[str, ToolRule]:
    for pattern in value:
        if not pattern.strip():
            raise ValueError("a tool name (or pattern) in approvals is empty")
    return value


class AgentApprovalSettings(BaseModel):
    """One agent's own rules (``[approvals.agents.<handle>]``); they win over the deployment's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tools: Annotated[dict[str, ToolRule], AfterValidator(_rules)] = Field(
        default_factory=dict,
        description="Tool name (or fnmatch pattern) -> 'always' or 'never'.",
    )
    timeout_seconds: float | None = Field(
        default=None,
        ge=10,
        le=MAX_TIMEOUT_SECONDS,
        allow_inf_nan=False,
        description="This agent's wait for a decision; default: the deployment's.",
    )


class ApprovalSettings(BaseModel):
    """Which tool calls wait for approval, and how long (``PERSYN_APPROVALS__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(
        default=True, description="Off: no call ever waits (the per-tool rules are ignored)."
    )
    timeout_seconds: float = Field(
        default=DEFAULT_TIMEOUT_SECONDS,
        ge=10,
        le=MAX_TIMEOUT_SECONDS,
        allow_inf_nan=False,
        description="How long a call waits for a decision before it is refused by default. "
        "The agent's lock is held meanwhile: keep it short.",
    )
    new_contacts: bool = Field(
        default=True,
        description="Ask before message_contact writes to someone who never talked with the agent.",
    )
    tell_the_person: bool = Field(
        default=True,
        description="Tell the person on their channel that the agent waits for approval (an "
        "unprompted message from the platform).",
    )
    sandbox_network: bool = Field(
        default=True,
        description="Ask before run_code when the sandbox has a network (sandbox.network is "
        "not 'none').",
    )
    mcp: bool = Field(
        default=True,
        description="Ask before a tool server's (MCP) tool runs, unless a rule says 'never'.",
    )
    phone_calls: bool = Field(
        default=True,
        description="Ask before place_call rings anyone: a call interrupts a person's day.",
    )
    tools: Annotated[dict[str, ToolRule], AfterValidator(_rules)] = Field(
        default_factory=dict,
        description="Tool name (or fnmatch pattern) -> 'always' or 'never', for every agent.",
    )
    agents: dict[str, AgentApprovalSettings] = Field(
        default_factory=dict, description="Per agent handle: its own rules and wait."
    )

    @field_validator("agents")
    @classmethod
    def _handles(cls, value: dict[str, AgentApprovalSettings]) -> dict[str, AgentApprovalSettings]:
        for handle in value:
            check_handle(handle)
        return value

    def timeout_for(self, agent: str) -> float:
        """How long a call of ``agent`` waits for a decision, in seconds."""
        own = self.agents.get(agent)
        if own is not None and own.timeout_seconds is not None:
            return own.timeout_seconds
        return self.timeout_seconds

    def rule_for(self, agent: str, tool: str) -> ToolRule | None:
        """The explicit rule for ``tool``: the agent's first, then the deployment's.

        An exact name wins over a pattern; among patterns, the longest.
        """
        own = self.agents.get(agent)
        for rules in (own.tools if own is not None else {}, self.tools):
            found = _match(rules, tool)
            if found is not None:
                return found
        return None


def _match(rules: dict[str, ToolRule], tool: str) -> ToolRule | None:
    if tool in rules:
        return rules[tool]
    matching = [pattern for pattern in rules if fnmatchcase(tool, pattern)]
    return rules[max(matching, key=len)] if matching else None


class CallFacts(BaseModel):
    """What the worker found out about one call before asking the policy."""

    model_config = ConfigDict(frozen=True)

    tool: str
    mcp: bool = False
    """The tool is a tool server's (``mcp__{server}__{tool}``)."""
    sandbox_network: bool = False
    """The tool runs code in a sandbox that has a network."""
    new_contact: str | None = None
    """The call writes to a person who never talked with the agent: their name."""
    rings: bool = False
    """The tool places a phone call."""


def needs_approval(settings: ApprovalSettings, *, agent: str, facts: CallFacts) -> str | None:
    """Why this call must wait for a person's decision, or ``None`` when it may run at once.

    Explicit rules (the agent's, then the deployment's) win over the defaults.
    """
    if not settings.enabled:
        return None
    rule = settings.rule_for(agent, facts.tool)
    if rule == "never":
        return None
    if rule == "always":
        return f"{facts.tool} always needs approval"
    if facts.new_contact is not None and settings.new_contacts:
        return f"{facts.tool} writes to {facts.new_contact}, who never talked with the agent"
    if facts.sandbox_network and settings.sandbox_network:
        return f"{facts.tool} runs code in a sandbox with network access"
    if facts.mcp and settings.mcp:
        return f"{facts.tool} is a tool server's tool the operator has not allowed outright"
    if facts.rings and settings.phone_calls:
        return f"{facts.tool} rings a person's phone"
    return None


class ApprovalWhen(StrEnum):
    """When a tool's calls wait for approval, as ``persyn tools list`` shows it."""

    ALWAYS = "always"
    FIRST_CONTACT = "first contact"
    """Only a message to someone who never talked with the agent."""
    WITH_NETWORK = "with network"
    """Every call, because the sandbox has a network."""
    NEVER = "never"


def approval_when(
    settings: ApprovalSettings, *, agent: str, facts: CallFacts, writes_to_contacts: bool
) -> ApprovalWhen:
    """When calls of ``facts.tool`` wait, whatever their arguments: :func:`needs_approval`'s view.

    ``facts`` are what is known of the tool without a call (``new_contact`` is ignored);
    ``writes_to_contacts`` says that a call may write to someone new, which only its arguments
    decide.
    """
    known = facts.model_copy(update={"new_contact": None})
    reason = needs_approval(settings, agent=agent, facts=known)
    if reason is not None:
        explicit = settings.rule_for(agent, facts.tool) is not None
        if known.sandbox_network and settings.sandbox_network and not explicit:
            return ApprovalWhen.WITH_NETWORK
        return ApprovalWhen.ALWAYS
    if writes_to_contacts:
        someone = known.model_copy(update={"new_contact": "someone new"})
        if needs_approval(settings, agent=agent, facts=someone) is not None:
            return ApprovalWhen.FIRST_CONTACT
    return ApprovalWhen.NEVER


def summarize_arguments(text: str, limit: int = SUMMARY_CHARS) -> str:
    """A call's arguments as an approval shows them: on one line, cut at ``limit``."""
    flat = " ".join(
        "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in line)
        for line in text.splitlines()
    )
    if len(flat) <= limit:
        return flat
    return flat[:limit] + f" [... {len(flat) - limit} characters cut]"


class ApprovalStatus(StrEnum):
    """Where an approval stands."""

    PENDING = "pending"
    APPROVED = "approved"
    REFUSED = "refused"
    EXPIRED = "expired"
    """Nobody decided before the deadline: refused by default."""

    @property
    def decided(self) -> bool:
        """Whether it is no longer waiting."""
        return self is not ApprovalStatus.PENDING


class ApprovalAsk(Wire):
    """On a tool call the generation round stored: this call waits for approval first."""

    approval_id: Ulid
    reason: str = Field(max_length=500, description="Why it needs approval, in a sentence.")
    timeout_seconds: float = Field(gt=0, le=MAX_TIMEOUT_SECONDS)


def _why(value: str) -> str:
    return clean_text(value, what="why", max_chars=MAX_WHY_CHARS)


Why = Annotated[
    str,
    AfterValidator(_why),
    text_json_schema(what="reason for the decision", max_chars=MAX_WHY_CHARS),
]
"""A decision's reason, checked like any text a person types."""


class DecideApprovalInput(Wire):
    """Approve or refuse one waiting tool call (update ``decide_approval`` on its activation).

    Use ``approval-{approval_id}-{approve|refuse}`` as the update ID: a retry is answered with
    the recorded decision, and the tool never runs twice.
    """

    approval_id: Ulid
    approve: bool = Field(description="true runs the tool; false refuses it.")
    by: Name = Field(description="Who decides (shown to the agent when it refuses).")
    why: Why | None = Field(default=None, description="Why, in a sentence (optional).")
    agent: AgentHandle | None = Field(
        default=None, description="The agent the approval must belong to; refused if not."
    )


class ApprovalDecision(Wire):
    """What was decided about one approval, as recorded."""

    approval_id: Ulid
    agent: AgentHandle
    tool: str
    status: ApprovalStatus
    decided_by: str
    decided_at: AwareDatetime
    why: str | None = None

    @property
    def approved(self) -> bool:
        """Whether the tool runs."""
        return self.status is ApprovalStatus.APPROVED


class PendingApproval(Wire):
    """An approval as the CLI, the web API and the console show it."""

    approval_id: Ulid
    agent: AgentHandle
    activation_id: Ulid
    call_id: Ulid
    tool: str
    arguments: str = Field(description="The call's arguments, on one line, cut.")
    reason: str
    asked_by: str = Field(description="Whose message (or which impulse) led to the call.")
    channel: str
    created_at: AwareDatetime
    deadline: AwareDatetime
    status: ApprovalStatus = ApprovalStatus.PENDING
    decided_by: str | None = None
    decided_at: AwareDatetime | None = None
    why: str | None = None


class AskApprovalInput(Wire):
    """Record a pending approval (activity ``approvals.ask``)."""

    approval_id: Ulid
    call_id: Ulid
    reason: str
    asked_by: str
    channel: str
    activation_id: Ulid
    agent: AgentHandle
    created_at: AwareDatetime
    deadline: AwareDatetime


class SettleApprovalInput(Wire):
    """Record a decision (activity ``approvals.settle``); a refusal becomes the call's result."""

    call_id: Ulid
    decision: ApprovalDecision


NOTICE_SERVICES_SKIPPED = frozenset({SELF_SERVICE, AGENT_SERVICE})
"""Services whose channels get no notice: the agent's own, and other agents'."""


def notice_text(found: PendingApproval) -> str:
    """What the person is told while the agent waits for approval of ``found``."""
    minutes = (found.deadline - found.created_at).total_seconds() / 60
    return (
        f"(Before I can use {found.tool}, a person has to approve it. I will go on as soon as "
        f"they decide, or in {minutes:.0f} min at most.)"
    )


def expired_why(timeout_seconds: float) -> str:
    """The reason recorded when nobody decided within ``timeout_seconds``."""
    minutes = timeout_seconds / 60
    waited = f"{minutes:g} min" if minutes >= 1 else f"{timeout_seconds:g} s"
    return f"no decision within {waited}: refused by default"


def refusal_text(decision: ApprovalDecision) -> str:
    """What the model reads as the result of a refused (or expired) call."""
    if decision.status is ApprovalStatus.EXPIRED:
        return decision.why or "no decision in time: refused by default"
    because = f": {decision.why}" if decision.why else ""
    return f"refused by {decision.decided_by}{because}"
