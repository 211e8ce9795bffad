"""Introspection and self-inspection: what the agent did on its own, and how it is configured."""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Literal

import psutil
from pydantic import BaseModel, Field

from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolInput, ToolRun
from schemas.autonomy import AutonomyEntry, FiringKind
from store.queries.autonomy import recent_autonomy

_STARTED = time.time()


class AutonomyList(BaseModel):
    """Recent self-initiated activations."""

    entries: list[AutonomyEntry]


class RecentAutonomyInput(ToolInput):
    """Input of ``recent_autonomy``."""

    kind: Literal["heartbeat", "reminder"] | None = Field(default=None, description="Only these.")
    limit: int = Field(default=10, ge=1, le=50)


class RecentAutonomy(Tool):
    """What recent heartbeats and reminders did."""

    name = "recent_autonomy"
    description = (
        "Review your own recent autonomous activity: each heartbeat and reminder that woke "
        "you, what you said, which tools you used, and your self-assessments."
    )
    input_model = RecentAutonomyInput
    output_model = AutonomyList

    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps

    async def run(self, call: ToolRun, args: RecentAutonomyInput) -> AutonomyList:
        """Read the log."""
        async with self._deps.db.session() as session:
            entries = await recent_autonomy(
                session,
                agent=call.context.agent,
                limit=args.limit,
                kind=FiringKind(args.kind) if args.kind else None,
            )
        return AutonomyList(entries=entries)


class SelfInspectInput(ToolInput):
    """Input of ``self_inspect`` (none)."""


class SelfInspect(Tool):
    """The agent's running configuration and host facts; in-process only."""

    name = "self_inspect"
    description = (
        "Look at your own running configuration: the models bound to each task, memory and "
        "retrieval settings, the tools you are offered, autonomy settings, and facts about the "
        "host (OS, runtime, processors, load, uptime, working directory)."
    )
    input_model = SelfInspectInput

    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps

    async def run(self, call: ToolRun, args: SelfInspectInput) -> dict[str, Any]:
        """Read in-process state and standard host facts; nothing remote."""
        settings = self._deps.settings
        models = {
            task.value: binding.model_dump(mode="json")
            for task, binding in self._deps.models.bindings.items()
        }
        tools = self._deps.registry.names() if self._deps.registry else []
        try:
            load: list[float] | None = [round(x, 2) for x in os.getloadavg()]
        except OSError:
            load = None
        return {
            "agent": call.context.agent,
            "models": models,
            "memory": settings.memory.model_dump(mode="json"),
            "encoder": settings.encoder,
            "embedding_dimensions": settings.embedding_dimensions,
            "autonomy": settings.autonomy.model_dump(mode="json"),
            "tools": tools,
            "host": {
                "os": f"{platform.system()} {platform.release()}",
                "runtime": f"{platform.python_implementation()} {platform.python_version()}",
                "executable": sys.executable.rsplit("/", 1)[-1],
                "processors": os.cpu_count(),
                "load_average": load,
                "host_uptime_seconds": int(time.time() - psutil.boot_time()),
                "process_uptime_seconds": int(time.time() - _STARTED),
                "working_directory": str(Path.cwd()),
            },
        }
