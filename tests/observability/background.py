"""Background work of a turn, as a consolidation would run it: a workflow that inherits the
turn's attribution and calls a model from an activity."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from activities.gateway.gateway import ModelGateway
from contract import attribution
from schemas.ids import new_ulid
from schemas.models import Attribution, ChatMessage, ModelRequest, TaskType
from tests.harness import Harness, unique


class BackgroundActivities:
    def __init__(self, gateway: ModelGateway) -> None:
        self._gateway = gateway

    @activity.defn(name="probe.summarize")
    async def summarize(self, text: str) -> str:
        request = ModelRequest(
            task=TaskType.SUMMARIZE,
            system="Summarize the exchange in one line.",
            messages=[ChatMessage(role="user", content=text)],
        )
        return (await self._gateway.complete(request)).text


@workflow.defn(name="ProbeBackground")
class ProbeBackground:
    @workflow.run
    async def run(self, text: str) -> str:
        return await workflow.execute_activity_method(
            BackgroundActivities.summarize, text, start_to_close_timeout=timedelta(seconds=30)
        )


@workflow.defn(name="ProbeSpawner")
class ProbeSpawner:
    """Binds a turn's attribution, then hands work to a child, as a conversation would."""

    @workflow.run
    async def run(self, turn: Attribution) -> str:
        attribution.bind(**turn.model_dump())
        return await workflow.execute_child_workflow(
            ProbeBackground.run, "consolidate this exchange", id=f"{workflow.info().workflow_id}/bg"
        )


def background_worker(client: Client, gateway: ModelGateway, task_queue: str) -> Worker:
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[ProbeSpawner, ProbeBackground],
        activities=[BackgroundActivities(gateway).summarize],
        # Test-only workflows live in a test module; the sandbox is for production code.
        workflow_runner=UnsandboxedWorkflowRunner(),
    )


async def run_background(harness: Harness, turn: Attribution) -> str:
    """Run one piece of background work for ``turn`` on its own worker; returns its reply."""
    queue = unique("bg")
    async with background_worker(harness.client, harness.deps.gateway, queue):
        result: str = await harness.client.execute_workflow(
            ProbeSpawner.run, turn, id=f"probe/{new_ulid()}", task_queue=queue
        )
    return result
