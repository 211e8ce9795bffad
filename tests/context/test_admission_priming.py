"""Admission primes the context sources before it writes the person's turn.

A source that can start from the agent, channel and text alone (recall's ground and the input's
embedding) is told so first thing in the admission step, so that work runs beside the speaker's
resolution and the turn's write instead of after them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from temporalio.client import Client

from activities.context.model import ContextBlock, ContextRequest, PrimableSource
from schemas.ids import new_ulid
from tests.deliberation.helpers import new_agent, worker
from tests.harness import Stack, event


@dataclass
class SpySource:
    """Records what it was primed with and what it was asked to fetch."""

    name: str = "spy"
    required: bool = False
    primed: list[tuple[str, str, str]] = field(default_factory=list)
    fetched: list[str] = field(default_factory=list)

    def prime(self, *, agent: str, channel_key: str, query: str) -> None:
        self.primed.append((agent, channel_key, query))

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        self.fetched.append(request.input.event.text)
        return None


async def test_admission_primes_every_source_that_can_start_early(
    client: Client, stack: Stack
) -> None:
    spy = SpySource()
    assert isinstance(spy, PrimableSource)
    async with worker(client, stack, sources=[spy]) as harness:
        agent = await new_agent(harness.db)
        inbound = event(f"primed {new_ulid()}")
        receipt = await harness.send(agent, inbound)
        assert receipt.marker is not None
    assert spy.primed == [(agent, inbound.channel.key, inbound.text)]
    assert spy.fetched == [inbound.text]  # primed once, then fetched once, for the same input
