"""The voice tests' worker and line: a real worker whose pipeline says what it concluded, and
the voice endpoint in front of it with the fast model each test module scripts (its ``FAST``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from tests.harness import Harness, Stack, running_worker
from tests.voice.calls import Line, serving_calls

BACKGROUND = [ScriptRule(task="respond", reply="BACKGROUND-SAID {last}")]
"""The pipeline's model: its reply is the conclusion a call's next answer weaves in."""


@pytest.fixture
async def worker(client: Client, stack: Stack) -> AsyncIterator[Harness]:
    async with running_worker(client, stack, rules=BACKGROUND) as harness:
        yield harness


@pytest.fixture
async def line(
    request: pytest.FixtureRequest, client: Client, stack: Stack, worker: Harness, tmp_path: Path
) -> AsyncIterator[Line]:
    fast: list[ScriptRule] = request.module.FAST
    settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
    async with serving_calls(settings, client, fast_rules=fast) as served:
        yield served
