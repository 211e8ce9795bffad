"""The agent's emotional state (spec §4.9): readings after each exchange, and their settings.

After every exchange a classifier (a model call) gives a probability distribution over the
emotional-state categories of :class:`schemas.memory.Emotion`; each reading is kept, per agent
and per conversation, as a trajectory. The *current* state is the newest reading decayed toward
a baseline by its age (exponential, ``half_life_minutes``), computed when it is read, so no timer
runs. A state that warrants it lets the decide step decline an optional request, saying why.
"""

from __future__ import annotations

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from schemas.events import InboundEvent, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.memory import Emotion


class EmotionSettings(BaseModel):
    """Emotional state (``PERSYN_EMOTION__<FIELD>``; ``[emotion]`` in ``persyn.toml``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(
        default=True, description="Classify the agent's emotional state after every exchange."
    )
    half_life_minutes: float = Field(
        default=120.0, gt=0, description="A reading's pull away from the baseline halves so often."
    )
    baseline: Emotion = Field(
        default=Emotion.NEUTRAL, description="Where the state returns when nothing happens."
    )
    decline_emotions: list[Emotion] = Field(
        default_factory=lambda: [Emotion.FRUSTRATED, Emotion.ANXIOUS],
        description="States in which the agent may decline an optional request.",
    )
    decline_threshold: float = Field(
        default=0.6,
        gt=0,
        le=1,
        description="...when the decayed probability of one of them is at least this.",
    )
    trajectory: int = Field(
        default=5, ge=1, le=20, description="Readings shown in context and by `agent show`."
    )
    classifier_turns: int = Field(
        default=6, ge=1, le=40, description="Latest turns of the conversation the classifier reads."
    )
    keep_days: float = Field(
        default=30.0,
        gt=0,
        description="Readings older than this are dropped as new ones arrive (long decayed).",
    )

    @model_validator(mode="after")
    def _baseline_is_not_declining(self) -> EmotionSettings:
        if self.baseline in self.decline_emotions:
            raise ValueError(
                "emotion.baseline must not be one of emotion.decline_emotions: "
                "the agent would decline optional requests forever"
            )
        return self


class ClassifyEmotionInput(Wire):
    """Input of ``emotion.classify``: the exchange that just ended (IDs only)."""

    agent: AgentHandle
    conversation_id: Ulid
    channel_key: str = Field(min_length=1, max_length=300)
    activation_id: Ulid
    window_turn_ids: list[str] = Field(default_factory=list, max_length=1000)
    reply_turn_id: str | None = Field(
        default=None, description="The agent's reply, when it spoke (not yet in the window)."
    )
    at: AwareDatetime
    agent_name: str | None = Field(
        default=None,
        max_length=200,
        description="The agent's name, as its activation was given it (inputs recorded before "
        "read it from the database).",
    )


class EmotionClassified(Wire):
    """What ``emotion.classify`` recorded, or why it recorded nothing."""

    recorded: bool
    top: Emotion | None = None
    probability: float | None = Field(default=None, ge=0, le=1)
    skipped: str | None = Field(
        default=None, max_length=300, description="Why nothing was recorded (fail soft)."
    )


class EmotionReadingPublic(Wire):
    """One reading of the trajectory, as the classifier gave it (normalised)."""

    id: Ulid
    agent: AgentHandle
    conversation_id: Ulid
    channel_key: str
    activation_id: Ulid
    at: AwareDatetime
    top: Emotion
    probability: float = Field(ge=0, le=1)
    distribution: dict[Emotion, float]


class EmotionStatePublic(Wire):
    """The current state: the newest reading decayed toward the baseline as of ``as_of``."""

    as_of: AwareDatetime
    top: Emotion
    probability: float = Field(ge=0, le=1)
    distribution: dict[Emotion, float]
    reading: EmotionReadingPublic | None = Field(
        default=None, description="The reading it decays from (none: the baseline itself)."
    )

    def words(self) -> str:
        """A few words: ``frustrated (0.72), then curious (0.15)``."""
        ranked = sorted(self.distribution.items(), key=lambda kv: kv[1], reverse=True)
        shown = [f"{e.value} ({p:.2f})" for e, p in ranked[:2] if p >= 0.1]
        return ", then ".join(shown) or f"{self.top.value} ({self.probability:.2f})"


class AgentEmotion(Wire):
    """An agent's current state and its recent trajectory, newest last."""

    agent: AgentHandle
    state: EmotionStatePublic
    trajectory: list[EmotionReadingPublic] = Field(default_factory=list)


class MoodNote(Wire):
    """The screen found a state in which an optional request may be declined."""

    emotion: Emotion
    probability: float = Field(ge=0, le=1)
    since: AwareDatetime = Field(description="When the reading it decays from was taken.")


class WeighRequestInput(Wire):
    """Input of ``emotion.weigh_request``: is the person's request an optional favour?"""

    agent: AgentHandle
    event: InboundEvent
    mood: MoodNote
