"""Traced workers for the observability tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from observability import tracing
from observability.metering.hub import UsageMeter
from schemas.settings import ContentPolicy
from temporal.client import connect
from tests.harness import Harness, Stack, running_worker


def tracing_overrides(
    span_file: Path, content: ContentPolicy = "full", **more: object
) -> dict[str, object]:
    return {
        "tracing_exporters": ["file"],
        "tracing_file": span_file,
        "tracing_content": content,
        **more,
    }


@asynccontextmanager
async def traced_worker(
    stack: Stack,
    span_file: Path,
    *,
    content: ContentPolicy = "full",
    meters: list[UsageMeter] | None = None,
    rules: list[ScriptRule] | None = None,
    **more: object,
) -> AsyncIterator[tuple[Harness, tracing.Tracing]]:
    """A worker whose client carries the tracing interceptor, writing spans to ``span_file``."""
    overrides = tracing_overrides(span_file, content, **more)
    settings = stack.settings(**overrides)
    client = await connect(settings, address=stack.temporal_address)
    traced = tracing.setup(settings)
    assert traced is not None
    try:
        async with running_worker(
            client, stack, meters=meters, rules=rules, settings_overrides=overrides
        ) as harness:
            yield harness, traced
    finally:
        traced.close()


async def finished(client: Client, activation_id: str) -> None:
    """Wait until the activation workflow itself has completed (its receipt comes earlier)."""
    await client.get_workflow_handle(names.activation_workflow_id(activation_id)).result()
