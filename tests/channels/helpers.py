"""Workers with extra channel adapters, and adapters that fail on cue, for the channel tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

from temporalio.client import Client

from activities.channels.adapters.base import (
    ChannelAdapter,
    DeliveryError,
    DeliveryOutcome,
    DeliveryReceipt,
    OutboundMessage,
)
from activities.channels.starting import start_delivery
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from schemas.delivery import DeliverySettings
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.models import ProviderName
from store.queries.contacts import send_unprompted
from store.tables import OutboxRow
from tests.harness import Harness, Stack, close_dependencies, dependencies, unique
from workers.build import build_worker


@dataclass
class CueAdapter:
    """An adapter for ``service`` that raises the queued errors in turn, then delivers."""

    service_name: str
    errors: list[DeliveryError] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    delivered: list[str] = field(default_factory=list)

    @property
    def service(self) -> str:
        return self.service_name

    async def deliver(self, message: OutboundMessage) -> DeliveryReceipt:
        self.calls.append(message.message_id)
        if self.errors:
            raise self.errors.pop(0)
        self.delivered.append(message.message_id)
        return DeliveryReceipt(DeliveryOutcome.DELIVERED, external_id=f"x-{len(self.delivered)}")


@asynccontextmanager
async def channel_worker(
    client: Client,
    stack: Stack,
    *,
    rules: list[ScriptRule] | None = None,
    adapters: Sequence[ChannelAdapter] | None = None,
    settings_overrides: dict[str, object] | None = None,
    task_queue: str | None = None,
) -> AsyncIterator[Harness]:
    """A worker like the harness's, with ``adapters`` beside the built-in ones."""
    settings = stack.settings(**(settings_overrides or {}))
    provider = ScriptedProvider(Script(rules=rules or []))
    deps = dependencies(settings, providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn)
    deps.extra_adapters = list(adapters or [])
    queue = task_queue or unique("tq-ch")
    worker = build_worker(client, deps, task_queue=queue)
    async with worker:
        yield Harness(
            client=client, task_queue=queue, deps=deps, provider=provider, worker=worker, db=deps.db
        )
    await close_dependencies(deps)


async def outbox_row(harness: Harness, message_id: str) -> OutboxRow | None:
    """The row as it is now in PostgreSQL."""
    async with harness.db.session() as session:
        return await session.get(OutboxRow, message_id, populate_existing=True)


async def queue_unprompted(harness: Harness, handle: str, channel: ChannelRef, text: str) -> str:
    """Queue an unprompted message as the agent's tools do, and start its delivery."""
    message_id = new_ulid()
    async with harness.db.session() as session:
        await send_unprompted(
            session,
            message_id=message_id,
            agent=handle,
            agent_name="Tester",
            channel=channel,
            text=text,
            at=datetime.now(UTC),
        )
    await start_delivery(
        harness.client,
        message_id=message_id,
        agent=handle,
        channel=channel,
        unprompted=True,
        settings=DeliverySettings(give_up_seconds=30),
        task_queue=harness.task_queue,
    )
    return message_id
