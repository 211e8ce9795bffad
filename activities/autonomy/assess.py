"""The heartbeat's self-assessment: a counter-perspective lens over the agent's recent life.

Runs inside the beat's activation (so its model call is attributed to the self-reflection
conversation). One lens is drawn at random from the critique template library
(``activities/prompts/critique/<lens>.md``; a built-in lens if the library is absent) and
applied to the agent's recent memories, open goals and recent autonomous activity. The result
is logged with the firing and joins the beat's prompt as the agent's own reflection.
"""

from __future__ import annotations

import logging
import random

from temporalio import activity

from activities.gateway.activity_call import complete
from activities.gateway.gateway import ModelGateway
from activities.prompts import load
from schemas.autonomy import AutonomyEntry, AutonomySettings, GoalPublic
from schemas.models import ChatMessage, ModelRequest, TaskType
from schemas.tools import SelfAssessInput, SelfAssessment
from store.db import Database
from store.queries.autonomy import recent_autonomy, save_assessment
from store.queries.goals import list_goals
from store.queries.reflection import RecentMemory, recent_memories
from store.queries.tool_calls import put_extension
from store.tables.columns import utcnow

log = logging.getLogger(__name__)

LENSES = ("adversarial", "predictive", "hopes", "fears")
"""Critique lenses that read a life as well as a reply (provenance and rules need a reply)."""

ASSESSMENT_POSITION = 0
"""Where the assessment joins the beat's prompt: before the tool loop's first round."""


def pick_lens(rng: random.Random | None = None) -> tuple[str, str]:
    """A lens name and its text, drawn at random from the library that is present."""
    rng = rng or random.Random()
    available = []
    for name in LENSES:
        try:
            available.append((name, load(f"critique/{name}.md")))
        except OSError:
            continue
    if not available:
        return "adversarial", load("autonomy/lens_fallback.md")
    return rng.choice(available)


def _lens_body(text: str) -> str:
    # The library's templates end with how to answer about a reply; keep only the lens itself.
    return text.split("\nHow to answer", 1)[0].strip()


def material(
    memories: list[RecentMemory], goals: list[GoalPublic], activity_: list[AutonomyEntry]
) -> str:
    """The evidence the critic reads."""
    lines = ["Recent memories (oldest first):"]
    lines += [
        f"- [{m.created_at:%Y-%m-%d %H:%M}, {m.channel_key}, importance {m.importance}] {m.summary}"
        for m in memories
    ] or ["- (none yet)"]
    lines.append("\nOpen goals:")
    lines += [f"- {g.goal_id}: {g.description} ({g.status.value})" for g in goals] or ["- (none)"]
    lines.append("\nRecent heartbeats and reminders (newest first):")
    for entry in activity_:
        what = entry.objective or entry.kind.value
        tools = ", ".join(entry.tools) or "no tools"
        said = (entry.said or "").replace("\n", " ")[:200]
        lines.append(f"- {entry.fired_at:%Y-%m-%d %H:%M} {what}: {entry.outcome}; {tools}; {said}")
    if not activity_:
        lines.append("- (none)")
    return "\n".join(lines)


class AssessActivities:
    """The heartbeat's self-assessment."""

    def __init__(self, db: Database, gateway: ModelGateway, settings: AutonomySettings) -> None:
        self._db = db
        self._gateway = gateway
        self._settings = settings

    @activity.defn(name="autonomy.self_assess")
    async def self_assess(self, data: SelfAssessInput) -> SelfAssessment:
        """Assess, log the assessment with the firing, and add it to the beat's prompt.

        Raises:
            ApplicationError: A classified provider failure; Temporal retries the transient ones.
        """
        async with self._db.session() as session:
            memories = await recent_memories(
                session,
                agent=data.agent,
                limit=self._settings.heartbeat_memories,
                present=data.participants or [],
            )
            goals = await list_goals(session, agent=data.agent)
            earlier = await recent_autonomy(session, agent=data.agent, limit=6)
        earlier = [e for e in earlier if e.event_id != data.event_id]
        lens, text = pick_lens()
        request = ModelRequest(
            task=TaskType.CRITIQUE,
            system=load("autonomy/self_assessment.md").replace("{lens}", _lens_body(text)),
            messages=[ChatMessage(role="user", content=material(memories, goals, earlier))],
            max_output_tokens=600,
        )
        # Heartbeating while the model thinks: a slow local model outlasts the heartbeat timeout.
        response = await complete(self._gateway, request)
        assessment = response.text.strip() or "(the assessment came back empty)"
        reflection = ChatMessage(
            role="user",
            content=f"My self-assessment just now, through the {lens} lens:\n\n{assessment}",
        )
        async with self._db.session() as session:
            await save_assessment(
                session, event_id=data.event_id, template=lens, assessment=assessment
            )
            await put_extension(
                session,
                prompt_id=data.prompt.prompt_id,
                position=ASSESSMENT_POSITION,
                message=reflection,
                at=utcnow(),
            )
            await session.commit()
        return SelfAssessment(template=lens, chars=len(assessment), memories=len(memories))
