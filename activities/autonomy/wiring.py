"""The autonomy activities and context sources, built from the worker's dependencies.

Called by the composition root (``workers.build``), which also builds the generation
activities around the tool registry made here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from temporalio.client import Client

from activities.autonomy.assess import AssessActivities
from activities.autonomy.firing import FiringActivities
from activities.autonomy.sources import AutonomyOutcomesSource, GoalsSource, QuickFactsSource
from activities.context.model import ContextSource
from activities.gateway.gateway import ModelGateway
from activities.memory.encoder import Encoder
from activities.notes.source import PinnedNotesSource
from activities.notes.tools import note_tools
from activities.tools.builtin import build_registry
from activities.tools.builtin.deps import ToolDeps
from activities.tools.invoke import ToolActivities
from activities.tools.registry import Tool, ToolRegistry
from activities.tools.web import build_web
from activities.voice.tools import voice_tools
from schemas.settings import Settings
from store.db import Database


@dataclass
class Autonomy:
    """What a worker registers for tools, reminders, goals and the heartbeat."""

    registry: ToolRegistry
    """The tools the agent may call; the generation activities offer them to the model."""
    sources: list[ContextSource] = field(default_factory=list)
    activities: list[Callable[..., Any]] = field(default_factory=list)


def build_autonomy(
    db: Database,
    gateway: ModelGateway,
    settings: Settings,
    client: Client | None,
    *,
    encoder: Encoder | None = None,
    extra_tools: list[Tool] | None = None,
) -> Autonomy:
    """The tool registry, the context sources and the autonomy activities.

    Args:
        db: The database.
        gateway: The model gateway.
        settings: The configuration (``settings.autonomy`` bounds tool calls).
        client: The worker's Temporal client; without one, reminder tools are absent and
            schedule-started workflows cannot deliver impulses.
        encoder: The text encoder (semantic memory search, goal-outcome memories).
        extra_tools: More platform tools (external tool servers, skills, tests).
    """
    web = build_web(settings)  # each web tool behind its own setting (docs/tools.md)
    deps = ToolDeps(
        db=db, settings=settings, models=gateway.registry, client=client, gateway=gateway
    )
    registry = build_registry(
        deps,
        encoder=encoder,
        # Notes own their tools (activities/notes/tools.py), as skills do.
        extra=[*web.tools, *note_tools(deps), *voice_tools(deps), *(extra_tools or [])],
        provider_tools=web.provider_tools,
    )
    tools = ToolActivities(db, registry, settings.autonomy)
    firing = FiringActivities(db, client, settings.delivery)
    assess = AssessActivities(db, gateway, settings.autonomy)
    return Autonomy(
        registry=registry,
        sources=[
            GoalsSource(db, settings.autonomy.goal_stall_days),
            PinnedNotesSource(db),
            QuickFactsSource(db),
            AutonomyOutcomesSource(db),
        ],
        activities=[
            tools.invoke,
            firing.claim_firing,
            firing.deliver_impulse,
            firing.retire_reminder,
            assess.self_assess,
        ],
    )
