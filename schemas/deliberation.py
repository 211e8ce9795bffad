"""Counter-perspective critique, refinement, the decision to speak and parked conclusions.

Spec §4 steps 4-6 and §4.2: a critic per lens returns structured objections, a refinement
remediates them, and the decide step gates transmission. Deferred conclusions are parked in
PostgreSQL for the agent's next turn on the channel. No I/O here.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from schemas.agents import DeliberationMode
from schemas.emotion import MoodNote
from schemas.events import ChannelRef, InboundEvent, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.streaming import StreamTarget


class Lens(StrEnum):
    """A counter-perspective template: the critical role the evaluator is given."""

    ADVERSARIAL = "adversarial"
    PREDICTIVE = "predictive"
    CONSTRAINED = "constrained"
    PROVENANCE = "provenance"
    HOPES = "hopes"
    FEARS = "fears"


DRAWN_LENSES = (Lens.ADVERSARIAL, Lens.PREDICTIVE, Lens.CONSTRAINED, Lens.HOPES, Lens.FEARS)
"""The lenses one is drawn from at random; provenance is a gate that always runs besides."""


class DeliberationSettings(BaseModel):
    """Critique, refinement and the decide step (``PERSYN_DELIBERATION__<FIELD>``).

    Mode precedence, most specific first: ``channels["{handle}/{service}:{channel}"]``,
    ``channels["{handle}/{service}"]``, ``channels["{service}:{channel}"]``,
    ``channels["{service}"]``, then the agent's own ``config.deliberation`` (deferred by default).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    channels: dict[str, DeliberationMode] = Field(
        default_factory=dict,
        description="Mode overrides by channel key, service, or either prefixed with 'handle/'.",
    )
    lenses: list[Lens] = Field(
        default_factory=lambda: list(DRAWN_LENSES),
        description="Templates one is drawn from per substantive reply (empty: provenance only).",
    )
    provenance: bool = Field(
        default=True, description="Run the provenance gate on every substantive reply."
    )
    rules_file: Path | None = Field(
        default=None,
        description="Rules of the constrained template (YAML, JSON or TOML); default: shipped.",
    )
    min_substantive_words: int = Field(
        default=8,
        ge=1,
        description="Shorter replies are not critiqued unless they speak of the past.",
    )
    judge_addressed: bool = Field(
        default=True,
        description="Ask the decide model about substantive addressed replies too, not only "
        "about unaddressed traffic.",
    )
    max_objections: int = Field(default=8, ge=1, le=50, description="Objections kept per critic.")
    critic_attempts: int = Field(
        default=2, ge=1, le=5, description="Tries per critic when its output is unusable."
    )
    parked_limit: int = Field(
        default=3, ge=1, le=20, description="Newest parked conclusions woven into one turn."
    )
    parked_ttl_hours: float = Field(
        default=7 * 24.0, gt=0, description="A conclusion never woven in is dropped after this."
    )

    @field_validator("lenses")
    @classmethod
    def _drawn_only(cls, value: list[Lens]) -> list[Lens]:
        # Provenance is not a lens to draw: it runs on its own switch. Keep order, drop repeats.
        return list(dict.fromkeys(lens for lens in value if lens is not Lens.PROVENANCE))

    def mode_for(
        self, *, agent: str, channel: ChannelRef, default: DeliberationMode
    ) -> DeliberationMode:
        """The mode on ``channel`` for ``agent`` whose own default is ``default``."""
        for key in (
            f"{agent}/{channel.key}",
            f"{agent}/{channel.service}",
            channel.key,
            channel.service,
        ):
            if key in self.channels:
                return self.channels[key]
        return default


class Objection(Wire):
    """One deviation a critic found (spec §4.2)."""

    type: str = Field(min_length=1, max_length=40, description="e.g. confabulation, rule_violation")
    span: str = Field(default="", max_length=600, description="The offending text, verbatim.")
    explanation: str = Field(min_length=1, max_length=1200)
    severity: int | None = Field(default=None, ge=1, le=10)
    correction: str | None = Field(default=None, max_length=1200)


class CritiqueStatus(StrEnum):
    """How a critic's output fared."""

    OK = "ok"
    REPAIRED = "repaired"
    FAILED = "failed"


class CritiqueInput(Wire):
    """Input of the critique activity: the stored prompt and the candidate it produced."""

    prompt_id: Ulid
    candidate: str = ""
    draft_id: Ulid | None = Field(
        default=None,
        description="The candidate's stored draft (then ``candidate`` is empty); inputs "
        "recorded before drafts carry the text instead.",
    )
    lens: Lens


class Critique(Wire):
    """A critic's verdict; ``failed`` critiques carry no objections and the turn goes on."""

    lens: Lens
    objections: list[Objection] = Field(default_factory=list)
    status: CritiqueStatus = CritiqueStatus.OK
    note: str | None = Field(default=None, max_length=300, description="Why it failed.")


class RefineInput(Wire):
    """Input of the refine activity."""

    prompt_id: Ulid
    candidate: str = ""
    draft_id: Ulid | None = Field(
        default=None,
        description="The candidate's stored draft (then ``candidate`` is empty); inputs "
        "recorded before drafts carry the text instead.",
    )
    objections: list[Objection]
    stream: StreamTarget | None = None


class Refinement(Wire):
    """The final response after remediating the objections."""

    text: str
    changed: bool
    model: str | None = None


class Deliberated(Wire):
    """What critique and refinement concluded about one candidate."""

    text: str
    lenses: list[Lens] = Field(default_factory=list)
    objections: list[Objection] = Field(default_factory=list)
    failed: list[Lens] = Field(default_factory=list, description="Critics that gave nothing.")
    refined: bool = False


class DeliberationPlanInput(Wire):
    """Input of the plan step: which mode applies and whether the candidate is substantive."""

    agent: AgentHandle
    channel: ChannelRef
    candidate: str = ""
    draft_id: Ulid | None = Field(
        default=None,
        description="The candidate's stored draft (then ``candidate`` is empty); inputs "
        "recorded before drafts carry the text instead.",
    )
    degraded: bool = False
    agent_mode: DeliberationMode | None = Field(
        default=None,
        description="The agent's own deliberation mode, as admission read it (inputs recorded "
        "before read it from the database).",
    )


class DeliberationPlan(Wire):
    """How this candidate is deliberated; the workflow draws the lens from ``lenses``."""

    mode: DeliberationMode
    substantive: bool
    lenses: list[Lens] = Field(default_factory=list)
    provenance: bool = True


class DeliberationInput(Wire):
    """Input of ``DeliberationWorkflow``: deferred critique of a transmitted reply."""

    activation_id: Ulid
    agent: AgentHandle
    channel: ChannelRef
    conversation_id: Ulid
    event_id: Ulid
    prompt_id: Ulid
    candidate: str = ""
    draft_id: Ulid | None = Field(
        default=None,
        description="The candidate's stored draft (then ``candidate`` is empty); inputs "
        "recorded before drafts carry the text instead.",
    )
    lens: Lens | None = None
    provenance: bool = True
    stream: StreamTarget | None = None


class DeliberationResult(Wire):
    """Result of ``DeliberationWorkflow``; ``parked_id`` is set when there was something to say."""

    deliberated: Deliberated
    parked_id: Ulid | None = None


class ParkInput(Wire):
    """Park a deferred conclusion for the agent's next turn on the channel."""

    parked_id: Ulid
    agent: AgentHandle
    channel_key: str
    activation_id: Ulid
    conversation_id: Ulid
    candidate: str = ""
    draft_id: Ulid | None = Field(
        default=None,
        description="The candidate's stored draft (then ``candidate`` is empty); inputs "
        "recorded before drafts carry the text instead.",
    )
    objections: list[Objection]
    refined: str | None = None
    at: AwareDatetime


class Parked(Wire):
    """Result of parking: ``False`` when a retry found the conclusion already parked."""

    inserted: bool


class SpeakBasis(StrEnum):
    """What settled the decision to speak."""

    RULE = "rule"
    GUARDRAIL = "guardrail"
    MODEL = "model"
    FALLBACK = "fallback"
    EMOTION = "emotion"
    """An optional request declined in a state that warrants it (docs/emotion.md)."""


class Verdict(Wire):
    """The decide step's verdict and what it rests on."""

    speak: bool
    reason: str = Field(min_length=1, max_length=500)
    basis: SpeakBasis


ADDRESSED = "Addressed, with a reply."
NOTHING_TO_ADD = "I had nothing to add."
NOT_ADDRESSED = "The message was not addressed to me and I had nothing to add."


def fallback_verdict(*, addressed: bool) -> Verdict:
    """The verdict when no judgment is available: answer people, leave bystanders be."""
    if addressed:
        return Verdict(speak=True, reason=ADDRESSED, basis=SpeakBasis.FALLBACK)
    return Verdict(speak=False, reason=NOT_ADDRESSED, basis=SpeakBasis.FALLBACK)


class ScreenInput(Wire):
    """Input of the screening step: rules and guardrail hooks, before any model is asked."""

    agent: AgentHandle
    channel: ChannelRef
    event: InboundEvent
    candidate: str = ""
    draft_id: Ulid | None = Field(
        default=None,
        description="The candidate's stored draft (then ``candidate`` is empty); inputs "
        "recorded before drafts carry the text instead.",
    )
    degraded: bool = False
    person_id: Ulid | None = Field(
        default=None,
        description="The speaker's person, as admission resolved it; inputs recorded before "
        "carry none, and the checks then look the speaker up.",
    )


class Screening(Wire):
    """A verdict when rules or guardrails settle it; ``None`` asks the decide model."""

    verdict: Verdict | None = None
    guardrail: str | None = Field(
        default=None,
        max_length=64,
        description="The guardrail check that vetoed the reply (a rule's ID, or 'cooldown'); "
        "the activation tags itself with it (PersynGuardrails).",
    )
    mood: MoodNote | None = Field(
        default=None,
        description="A state in which the agent may decline the request if it is optional.",
    )


class ReviewInput(Wire):
    """Input of the review step: the deliberation plan, then the screen, in one step."""

    plan: DeliberationPlanInput
    screen: ScreenInput


class Review(Wire):
    """The plan, and the screening unless inline critics must revise the draft first."""

    plan: DeliberationPlan
    screening: Screening | None = Field(
        default=None,
        description="None: the plan runs critics inline, so the revised draft is screened "
        "after them.",
    )


class JudgeInput(Wire):
    """Input of the engagement judgment (a fast model call)."""

    agent: AgentHandle
    event: InboundEvent
    candidate: str = ""
    draft_id: Ulid | None = Field(
        default=None,
        description="The candidate's stored draft (then ``candidate`` is empty); inputs "
        "recorded before drafts carry the text instead.",
    )
    window_turn_ids: list[Ulid] = Field(default_factory=list)
    participants: int = 1


class SettleInput(Wire):
    """After the turn: record the decision, consume the parked conclusions it spoke on."""

    activation_id: Ulid
    agent: AgentHandle
    channel_key: str
    event_id: Ulid
    prompt_id: Ulid
    transmitted: bool
    verdict: Verdict | None = None
    mode: DeliberationMode | None = None
    lenses: list[Lens] = Field(default_factory=list)
    objections: int = 0
    refined: bool = False
    at: AwareDatetime


class Settled(Wire):
    """How many parked conclusions the turn consumed."""

    consumed: int = 0
