"""A worker process killed in the middle of a delegated task: the task resumes elsewhere.

Completed steps are in the task's history and are never run again; only the step in flight is
retried, on the second worker, once the first one's heartbeat is missed.
"""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import Client

from activities.sandbox.docker import DockerProvider
from contract import names
from schemas.ids import new_ulid
from schemas.sandbox import SandboxSettings
from schemas.sandbox_task import SandboxReport, SandboxTaskBounds, SandboxTaskInput
from temporal import inbox
from tests.harness import Stack, running_worker, terminal, unique, until
from tests.sandbox.engine import DockerEngine
from tests.workflows.test_faults import WorkerProcess, worker_processes  # noqa: F401

_SCRIPT = {
    "rules": [
        {"task": "sandbox", "tool_match": "step-two", "reply": "Both steps ran."},
        {
            "task": "sandbox",
            "tool_match": "step-one",
            "tool_calls": [
                {
                    "name": "run_command",
                    "arguments": {"command": "sleep 5; echo second >> log.txt; echo step-two"},
                }
            ],
        },
        {
            "task": "sandbox",
            "after_tool": False,
            "tool_calls": [
                {
                    "name": "run_command",
                    "arguments": {"command": "echo first >> log.txt; echo step-one"},
                }
            ],
        },
    ]
}


async def test_a_worker_killed_mid_task_resumes_without_rerunning_completed_commands(
    client: Client,
    stack: Stack,
    docker_engine: DockerEngine,
    worker_processes: list[WorkerProcess],  # noqa: F811
    tmp_path: Path,
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(_SCRIPT))
    queue = unique("tq-sandbox-kill")
    first = WorkerProcess(stack, queue, script, tmp_path / "worker1.log")
    second = WorkerProcess(stack, queue, script, tmp_path / "worker2.log")
    for worker in (first, second):
        worker.env["PERSYN_SANDBOX__DOCKER_HOST"] = docker_engine.host
        worker.env["PERSYN_SANDBOX__IMAGE"] = docker_engine.image
    worker_processes.extend([first, second])
    agent = unique("killed")
    provider = DockerProvider(
        SandboxSettings(docker_host=docker_engine.host, image=docker_engine.image)
    )

    # An in-process worker only for the database; it polls another queue.
    async with running_worker(client, stack) as harness:
        await harness.create_agent(agent)
        first.start()
        await until(lambda: inbox.has_pollers(client, queue))
        task = SandboxTaskInput(
            task_id=new_ulid(),
            agent=agent,
            objective="run two steps",
            channel=terminal(),
            activation_id=new_ulid(),
            bounds=SandboxTaskBounds(max_rounds=4),
        )
        handle = await client.start_workflow(
            names.SANDBOX_TASK_WORKFLOW,
            task,
            id=names.sandbox_task_workflow_id(task.task_id),
            task_queue=queue,
            result_type=SandboxReport,
        )

        async def second_step_running() -> bool:
            described = await handle.describe()
            return any(
                p.activity_id == "round-1-0"
                and p.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
                for p in described.raw_description.pending_activities
            )

        await until(second_step_running, timeout=90)
        first.kill()
        second.start()
        try:
            report = await handle.result()
            log = (await provider.read_file(agent, "log.txt")).decode()
        finally:
            await provider.teardown(agent)
            await provider.close()

    assert (report.status, report.text, report.steps) == ("done", "Both steps ran.", 2)
    # The completed first command ran once; the one in flight may have finished twice.
    assert log.count("first") == 1
    assert log.count("second") >= 1
    history = await handle.fetch_history()
    started = [
        e.activity_task_scheduled_event_attributes.activity_id
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert started.count("round-0-0") == 1
