"""The built-in tools, assembled into a registry."""

from __future__ import annotations

from collections.abc import Iterable

from activities.memory.encoder import Encoder
from activities.tools.builtin.calculate import CalculateTool
from activities.tools.builtin.code import code_tools
from activities.tools.builtin.contact import MessageContact
from activities.tools.builtin.deps import ToolDeps
from activities.tools.builtin.facts import fact_tools
from activities.tools.builtin.goals import OutcomeMemory, goal_tools
from activities.tools.builtin.graph import QueryGraph
from activities.tools.builtin.images import image_tools
from activities.tools.builtin.introspect import RecentAutonomy, SelfInspect
from activities.tools.builtin.memory import GoalOutcomes, memory_tools
from activities.tools.builtin.people import BriefOn
from activities.tools.builtin.reminders import reminder_tools
from activities.tools.builtin.workspaces import workspace_tools
from activities.tools.registry import Tool, ToolRegistry
from schemas.models import ToolSpec


def build_registry(
    deps: ToolDeps,
    *,
    encoder: Encoder | None = None,
    extra: Iterable[Tool] = (),
    provider_tools: Iterable[ToolSpec] = (),
    goal_memory: OutcomeMemory | None = None,
) -> ToolRegistry:
    """Every built-in tool, plus ``extra`` ones (external tool servers, skills, tests).

    Args:
        deps: What the tools are built from.
        encoder: The text encoder for semantic memory search and goal-outcome memories.
        extra: More platform tools.
        provider_tools: Tools the model provider runs itself (advertised only).
        goal_memory: Remembers goal outcomes (default: a first-person memory record).
    """
    tools: list[Tool] = [
        CalculateTool(),
        *reminder_tools(deps),
        *goal_tools(deps, goal_memory or GoalOutcomes(deps, encoder)),
        *memory_tools(deps, encoder),
        *fact_tools(deps),
        RecentAutonomy(deps),
        SelfInspect(deps),
        MessageContact(deps),
        BriefOn(deps),
        *([QueryGraph(deps)] if deps.settings.graph.enabled else []),
        *code_tools(deps),
        *image_tools(deps),
        *workspace_tools(deps, encoder),
        *extra,
    ]
    registry = ToolRegistry(tools, provider_tools)
    deps.registry = registry
    return registry
