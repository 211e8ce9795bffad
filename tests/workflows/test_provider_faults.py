"""Provider faults through a real agent turn: Temporal retries what may pass, not what cannot.

The worker's OpenAI provider points at a local fake server that fails on cue; everything else
(Temporal, PostgreSQL, the workflows and activities) is real.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from temporalio.client import Client

from activities.gateway.providers.openai import OpenAIProvider
from schemas.activation import FALLBACK_REPLY
from schemas.events import Outcome, Receipt
from schemas.models import ProviderName
from tests.fakes.provider_server import FakeProviderServer
from tests.harness import Harness, Stack, running_worker

REPLY = "Good to hear from you again."
SDK_TIMEOUT_S = 2.0


@pytest.fixture
def fake() -> Iterator[FakeProviderServer]:
    with FakeProviderServer(reply=REPLY) as server:
        yield server


@pytest.fixture
async def openai_harness(
    client: Client, stack: Stack, fake: FakeProviderServer
) -> AsyncIterator[Harness]:
    provider = OpenAIProvider("test", fake.openai_url, timeout_seconds=SDK_TIMEOUT_S)
    async with running_worker(
        client,
        stack,
        providers={ProviderName.OPENAI: provider},
        settings_overrides={"provider": "openai", "openai_api_key": "test"},
    ) as running:
        yield running


async def talk(harness: Harness) -> Receipt:
    agent = await harness.create_agent()
    return await harness.say(agent.handle, "hello, it has been a while")


def model_calls(fake: FakeProviderServer) -> int:
    return sum(1 for r in fake.requests if r.path == "/v1/chat/completions")


async def test_rate_limits_are_retried_until_the_reply(
    openai_harness: Harness, fake: FakeProviderServer
) -> None:
    fake.fail(429, times=2, retry_after=1)

    receipt = await talk(openai_harness)

    assert receipt.marker is not None
    assert receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == REPLY
    assert not receipt.marker.degraded
    assert model_calls(fake) == 3


async def test_a_server_error_is_retried_until_the_reply(
    openai_harness: Harness, fake: FakeProviderServer
) -> None:
    fake.fail(500)

    receipt = await talk(openai_harness)

    assert receipt.marker is not None
    assert receipt.marker.text == REPLY
    assert not receipt.marker.degraded
    assert model_calls(fake) == 2


async def test_refused_credentials_are_not_retried_and_the_agent_falls_back(
    openai_harness: Harness, fake: FakeProviderServer
) -> None:
    fake.fail(401, times=None)

    receipt = await talk(openai_harness)

    assert receipt.marker is not None
    assert receipt.marker.outcome is Outcome.DEGRADED
    assert receipt.marker.text == FALLBACK_REPLY
    assert receipt.marker.degraded
    assert model_calls(fake) == 1


async def test_a_timed_out_attempt_is_retried_until_the_reply(
    openai_harness: Harness, fake: FakeProviderServer
) -> None:
    fake.delay(SDK_TIMEOUT_S * 3)

    receipt = await talk(openai_harness)

    assert receipt.marker is not None
    assert receipt.marker.text == REPLY
    assert not receipt.marker.degraded
    assert model_calls(fake) == 2
