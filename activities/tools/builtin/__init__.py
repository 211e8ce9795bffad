"""The built-in tools, assembled into a registry."""

from __future__ import annotations

from collections.abc import Iterable

from activities.tools.builtin.calculate import CalculateTool
from activities.tools.builtin.contact import MessageContact
from activities.tools.builtin.deps import ToolDeps
from activities.tools.builtin.facts import fact_tools
from activities.tools.builtin.goals import OutcomeMemory, goal_tools
from activities.tools.builtin.introspect import RecentAutonomy, SelfInspect
from activities.tools.builtin.reminders import reminder_tools
from activities.tools.registry import Tool, ToolRegistry
from schemas.models import ToolSpec


def build_registry(
    deps: ToolDeps,
    *,
    extra: Iterable[Tool] = (),
    provider_tools: Iterable[ToolSpec] = (),
    goal_memory: OutcomeMemory | None = None,
) -> ToolRegistry:
    """Every built-in tool, plus ``extra`` ones (memory tools, external servers, skills).

    Args:
        deps: What the tools are built from.
        extra: More platform tools.
        provider_tools: Tools the model provider runs itself (advertised only).
        goal_memory: Remembers goal outcomes; none leaves them to conversation consolidation.
    """
    tools: list[Tool] = [
        CalculateTool(),
        *reminder_tools(deps),
        *goal_tools(deps, goal_memory),
        *fact_tools(deps),
        RecentAutonomy(deps),
        SelfInspect(deps),
        MessageContact(deps),
        *extra,
    ]
    registry = ToolRegistry(tools, provider_tools)
    deps.registry = registry
    return registry
