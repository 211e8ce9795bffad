"""The soak's traffic: agents talk in short sessions on changing channels, one message at a time.

A message is submitted again (same event, same ID) until a receipt comes back, as a channel
adapter retries through an outage; its latency is what the person waited, retries included.
Between sessions each agent falls silent long enough for its conversation to idle out, so
conversations close and consolidate while the soak runs. Load stays bounded: at most one
message in flight per agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from temporalio.client import Client

from schemas.events import ChannelRef, InboundEvent, Receipt, Speaker
from schemas.ids import new_ulid
from temporal import inbox

log = logging.getLogger("persyn.systemtests.soak")

CHANNELS = (
    ChannelRef(service="terminal", channel="tty"),
    ChannelRef(service="web", channel="home"),
    ChannelRef(service="chat", channel="general"),
)

IMPORTANT_WORD = "keepsake"
"""Messages with this word are rated important by the soak's script; culling must keep them."""

SUBMIT_TIMEOUT_S = 45.0
"""One submission attempt; past it the same event is submitted again."""


@dataclass
class Sent:
    """One message and what became of it."""

    agent: str
    event: InboundEvent
    submitted: float
    done: float | None = None
    outcome: str | None = None
    reply: str | None = None
    attempts: int = 0
    probe: bool = False

    @property
    def latency(self) -> float | None:
        """Seconds from the first submission to the receipt."""
        return None if self.done is None else self.done - self.submitted


@dataclass
class Traffic:
    """Drives every agent until :attr:`stopping` is set; keeps every message sent."""

    client: Callable[[], Awaitable[Client]]
    handles: list[str]
    task_queue: str
    rng: random.Random
    session_pause_s: tuple[float, float]
    think_s: tuple[float, float] = (0.3, 1.5)
    important_share: float = 0.15
    probe: str | None = None
    """An agent that only measures: one message every ``probe_every_s``, for latency."""
    probe_every_s: float = 2.0
    sent: list[Sent] = field(default_factory=list)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    errors: dict[str, int] = field(default_factory=dict)

    async def run(self) -> None:
        """Talk until stopped; every message sent before the stop gets its receipt."""
        probing = [self._probe(self.probe)] if self.probe else []
        await asyncio.gather(*(self._agent(handle) for handle in self.handles), *probing)

    async def _probe(self, handle: str) -> None:
        count = 0
        while not self.stopping.is_set():
            count += 1
            sent = await self.deliver(handle, CHANNELS[0], f"probe {count}")
            sent.probe = True
            await self._pause(self.probe_every_s)

    async def _agent(self, handle: str) -> None:
        count = 0
        # Agents start staggered, so the first faults do not all land at the same step.
        await self._pause(self.rng.uniform(0, 3))
        while not self.stopping.is_set():
            channel = self.rng.choice(CHANNELS)
            for _ in range(self.rng.randint(2, 5)):
                if self.stopping.is_set():
                    return
                count += 1
                important = self.rng.random() < self.important_share
                text = f"{handle} message {count} on {channel.service}"
                if important:
                    text += f", a {IMPORTANT_WORD} to remember"
                await self.deliver(handle, channel, text)
                await self._pause(self.rng.uniform(*self.think_s))
            await self._pause(self.rng.uniform(*self.session_pause_s))

    async def _pause(self, seconds: float) -> None:
        # Pacing between messages, cut short when the run stops.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), seconds)

    async def deliver(self, handle: str, channel: ChannelRef, text: str) -> Sent:
        """Submit one message, again and again with the same event, until it is answered."""
        event = InboundEvent(
            event_id=new_ulid(),
            channel=channel,
            speaker=Speaker(speaker_id=f"{handle}-friend", display_name="Friend"),
            text=text,
        )
        sent = Sent(agent=handle, event=event, submitted=time.monotonic())
        self.sent.append(sent)
        while True:
            sent.attempts += 1
            try:
                client = await self.client()
                receipt: Receipt = await asyncio.wait_for(
                    inbox.submit(client, handle=handle, event=event, task_queue=self.task_queue),
                    SUBMIT_TIMEOUT_S,
                )
            except Exception as err:  # an outage: the channel adapter tries again
                kind = type(err).__name__
                self.errors[kind] = self.errors.get(kind, 0) + 1
                log.debug("submit %s failed (%s); retrying", event.event_id, kind)
                await asyncio.sleep(1.0)
                continue
            sent.done = time.monotonic()
            if receipt.marker is not None:
                sent.outcome = receipt.marker.outcome.value
                sent.reply = receipt.marker.text
            return sent
