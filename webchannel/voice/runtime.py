"""What the voice endpoint shares across calls: the gateway, the guardrails, the sessions.

Built on the first call's turn (a service that takes no calls builds nothing) and closed with
the service.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request

from activities.channels.pacing import PacingActivities
from activities.deliberation.guardrails import GuardrailCheck
from activities.gateway.base import Provider
from activities.guardrails.wiring import build_guardrails
from schemas.models import ProviderName
from webchannel.state import WebState
from webchannel.voice.session import CallSessions
from workers.build import Dependencies, build_dependencies

log = logging.getLogger(__name__)


@dataclass
class VoiceRuntime:
    """The fast path's model gateway and guardrail checks, the cached calls, their tasks."""

    deps: Dependencies
    checks: list[GuardrailCheck]
    pacing: PacingActivities
    """The token budget of a paced channel, asked as an activation asks it."""
    sessions: CallSessions = field(default_factory=CallSessions)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` off the answer's path, kept until done and logged if it fails."""
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a call's background work failed", exc_info=task.exception())

    async def drain(self) -> None:
        """Wait for the work in flight (tests, and a service stopping)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def aclose(self) -> None:
        """Let the work in flight finish, then close the gateway and the pool."""
        await self.drain()
        await self.deps.aclose()


async def voice_runtime(request: Request, state: WebState) -> VoiceRuntime:
    """The app's voice runtime, built once from the service's settings.

    ``app.state.voice_providers`` (tests, benchmarks) replaces the configured providers.
    """
    app: FastAPI = request.app
    runtime: VoiceRuntime | None = getattr(app.state, "voice", None)
    if runtime is not None:
        return runtime
    building: asyncio.Lock | None = getattr(app.state, "voice_building", None)
    if building is None:  # no await since the look: one lock per app
        building = app.state.voice_building = asyncio.Lock()
    async with building:
        runtime = getattr(app.state, "voice", None)
        if runtime is None:
            providers: dict[ProviderName, Provider] | None = getattr(
                app.state, "voice_providers", None
            )
            deps = build_dependencies(state.settings, providers=providers)
            checks = build_guardrails(deps.db, state.settings.guardrails, deps.gateway).checks
            pacing = PacingActivities(deps.db, state.settings.pacing)
            runtime = VoiceRuntime(deps=deps, checks=checks, pacing=pacing)
            app.state.voice = runtime
    return runtime


async def close_voice(app: FastAPI) -> None:
    """Close the voice runtime, if a call built one."""
    runtime: VoiceRuntime | None = getattr(app.state, "voice", None)
    if runtime is not None:
        app.state.voice = None
        await runtime.aclose()
