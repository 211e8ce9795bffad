"""``SandboxTaskWorkflow`` replays deterministically: a fresh history, and one recorded earlier.

PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept, never
rewritten: a change to the workflow must replay them (``workflow.patched``).
"""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client, WorkflowHistory

from contract import names
from tests.harness import Stack, record_new_histories, replayer
from tests.sandbox.delegation import new_agent, run_task, sandbox_rules, sandbox_worker
from tests.sandbox.engine import DockerEngine

HISTORIES = Path(__file__).parent / "histories"
NAME = "sandbox_task"


async def test_a_fresh_sandbox_task_history_replays(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    async with sandbox_worker(client, stack, docker_engine, rules=sandbox_rules()) as harness:
        agent = await new_agent(harness)
        report = await run_task(harness, agent, "Compute six times seven.")
        assert report.status == "done"
        history = await client.get_workflow_handle(
            names.sandbox_task_workflow_id(report.task_id)
        ).fetch_history()
    kinds = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert kinds == [
        "sandbox.think",
        "sandbox.step",
        "sandbox.think",
        "sandbox.step",
        "sandbox.think",
        "sandbox.deliver",
    ]
    record_new_histories(HISTORIES, {NAME: history})
    await replayer(client).replay_workflow(history)


async def test_the_recorded_sandbox_task_history_replays(client: Client) -> None:
    path = HISTORIES / f"{NAME}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{NAME}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)
