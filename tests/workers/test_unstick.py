"""Handing a dead worker's runs to the shared queue (``workers/unstick.py``)."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType, TaskQueueKind
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.client import Client

from contract import names
from tests.harness import Harness, Stack, running_worker, unique, until
from workers.unstick import open_runs_query, unstick


async def _scheduled_on(client: Client, workflow_id: str) -> list[TaskQueue]:
    """The queue each workflow task of the run was scheduled on, in order."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return [
        e.workflow_task_scheduled_event_attributes.task_queue
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
    ]


async def _open_runs(client: Client, task_queue: str) -> int:
    return len([run async for run in client.list_workflows(open_runs_query(task_queue))])


async def test_after_unstick_no_task_goes_to_the_dead_workers_queue(
    client: Client, stack: Stack
) -> None:
    queue = unique("tq")
    async with running_worker(client, stack, task_queue=queue) as first_worker:
        agent = await first_worker.create_agent()
        first = await first_worker.say(agent.handle, "hello")
        assert first.marker is not None and first.marker.conversation_id is not None
        runs = [
            names.agent_workflow_id(agent.handle),
            names.conversation_workflow_id(first.marker.conversation_id),
        ]
        # A live worker caches both runs: the next message's tasks go to its own sticky queue.
        seen = {run: len(await _scheduled_on(client, run)) for run in runs}
        await first_worker.say(agent.handle, "again")
        dead: set[str] = set()
        for run in runs:
            queue_of_next = (await _scheduled_on(client, run))[seen[run]]
            assert queue_of_next.kind == TaskQueueKind.TASK_QUEUE_KIND_STICKY, run
            dead.add(queue_of_next.name)
    # The worker has stopped polling, as a killed one has; its sticky queue is still the
    # runs' destination until the reset. The runs are counted after the reset: a task the
    # first worker's last work scheduled before the reset is the second worker's to take.
    await until(lambda: _open_runs(client, queue))
    assert await unstick(client, queue) >= len(runs)
    seen = {run: len(await _scheduled_on(client, run)) for run in runs}

    async with running_worker(client, stack, task_queue=queue) as second_worker:
        third = await second_worker.say(agent.handle, "and once more")
        assert third.marker is not None and third.marker.text
    for run in runs:
        after_reset = (await _scheduled_on(client, run))[seen[run] :]
        assert after_reset, run
        # Nothing more is sent to the dead worker's queue: the next task goes to the shared
        # queue, or (when the second worker took one already pending) to the second's own.
        assert not [q.name for q in after_reset if q.name in dead], run


async def test_unstick_touches_only_its_own_task_queue(harness: Harness) -> None:
    agent = await harness.create_agent()
    await harness.say(agent.handle, "hello")
    assert await unstick(harness.client, f"{harness.task_queue}-elsewhere") == 0


def test_the_query_quotes_the_task_queue() -> None:
    assert open_runs_query('a"b') == 'TaskQueue = "a\\"b" AND ExecutionStatus = "Running"'
