"""Submission asks the channel's presence whether a worker serves, and reads nothing else."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.client import Client

from schemas.events import Outcome
from tests.harness import Stack, event, running_worker
from tests.workers.import_graph import imports
from usecases import submission
from usecases.errors import NoWorkerError


@dataclass
class Says:
    """A presence that answers what it is told to, with no grace."""

    present: bool

    async def serving(self, client: Client) -> bool:
        return self.present

    def grace(self) -> float:
        return 0.0


async def test_the_no_worker_refusal_is_the_injected_presences_answer(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack) as harness:
        agent = await harness.create_agent()
        # A worker serves this queue and this home has no beacons: only the presence says no.
        settings = stack.settings(home=tmp_path, task_queue=harness.task_queue)
        ev = event("anyone?")

        with pytest.raises(NoWorkerError) as refused:
            await asyncio.wait_for(
                submission.submit(
                    client=client,
                    settings=settings,
                    presence=Says(present=False),
                    handle=agent.handle,
                    event=ev,
                ),
                10,
            )
        assert str(refused.value) == f"no worker is serving task queue {harness.task_queue!r}"
        assert refused.value.event_id == ev.event_id

        receipt = await asyncio.wait_for(
            submission.submit(
                client=client,
                settings=settings,
                presence=Says(present=True),
                handle=agent.handle,
                event=ev,
            ),
            60,
        )

    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == "anyone?"


def test_no_use_case_reads_the_workers_files() -> None:
    # Whether a worker serves reaches submission as a WorkerPresence, never by import.
    reaching = [
        f"{module} (line {found.line}) imports {found.written}"
        for module, targets in imports().items()
        if module.split(".")[0] == "usecases"
        for found in targets
        if found.module.split(".")[0] == "workers"
    ]
    assert reaching == []
