"""Workers with extra channel adapters, and adapters that fail on cue, for the channel tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from temporalio.client import Client

from activities.channels.adapters.base import (
    ChannelAdapter,
    DeliveryError,
    DeliveryOutcome,
    DeliveryReceipt,
    OutboundMessage,
)
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from schemas.models import ProviderName
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
    adapters: list[ChannelAdapter] | None = None,
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
