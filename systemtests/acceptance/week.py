"""The acceptance week's shared vocabulary: the agents, a verdict, the week's state, waiting."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from activities.gateway.providers.scripted import ScriptedProvider
from schemas.events import Receipt
from systemtests.acceptance.world import World

AGENT = "wren"
PEER = "moss"
HOLDS, FAILS, NOT_AVAILABLE = "holds", "FAILS", "not available"


@dataclass
class Verdict:
    """What one behaviour showed."""

    status: str
    evidence: str


@dataclass
class Week:
    """The world and what the week has learned so far, shared by the behaviours in order."""

    world: World
    real_model: bool
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def scripted(self) -> ScriptedProvider | None:
        """The scripted model, whose rules a behaviour may extend; None with a real model."""
        return self.world.scripted

    async def say(self, text: str, channel: Any) -> Receipt:
        """Ada says ``text`` to the agent on ``channel``."""
        return await self.world.say(AGENT, text, channel=channel)


def verdict(held: bool, evidence: str) -> Verdict:
    """A verdict that holds or fails, with what showed it."""
    return Verdict(HOLDS if held else FAILS, evidence)


async def wait_for(predicate: Callable[[], Awaitable[object]], timeout: float) -> bool:
    """Whether ``predicate`` came true within ``timeout`` seconds (polled, never a fixed wait)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await predicate():
            return True
        await asyncio.sleep(0.2)
    return False
