"""What delegation costs: one delegated sandbox task against the same commands run directly.

A task that writes a script and runs it, three scripted model rounds (write, run, report) at
zero model latency, through a real worker process, a tuned Temporal dev server, embedded
PostgreSQL and a Docker engine: measured from the workflow's start to its result (the report
delivered). Against it: the same two steps through the execution provider in-process, and as
two ``docker exec`` calls of the CLI into the same container. Runs are interleaved, after one
warm-up task that provisions the agent's environment.

Run: ``python -m bench.delegation [--docker-host unix:///PATH/docker.sock] [--image IMAGE]
[--runs 20]``; without ``--docker-host`` a private engine is started as the tests start one
(``dockerd`` and ``busybox`` installed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from activities.sandbox.docker import DockerProvider
from activities.sandbox.paths import resource_name
from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from contract import names
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.sandbox import SandboxSettings
from schemas.sandbox_task import SandboxReport, SandboxTaskBounds, SandboxTaskInput
from store.db import Database

SCRIPT_TEXT = "echo sixty-four $((6*7))\n"
SCRIPT = {
    "rules": [
        {"task": "sandbox", "tool_match": "sixty-four", "reply": "It printed 42."},
        {
            "task": "sandbox",
            "tool_match": "wrote",
            "tool_calls": [{"name": "run_command", "arguments": {"command": "sh six.sh"}}],
        },
        {
            "task": "sandbox",
            "after_tool": False,
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "six.sh", "content": SCRIPT_TEXT}}
            ],
        },
    ]
}
CHANNEL = ChannelRef(service="terminal", channel="bench")


@asynccontextmanager
async def engine(host: str | None, image: str) -> AsyncIterator[tuple[str, str]]:
    """The engine to use: the one named, or a private one started for the run."""
    if host:
        yield host, image
        return
    from tests.sandbox.engine import private_engine  # the tests' own engine launcher

    async with private_engine() as started:
        yield started.host, started.image


async def delegated(stack: BenchStack, queue: str, agent: str) -> float:
    """Seconds from starting one task to its result (the report delivered)."""
    task = SandboxTaskInput(
        task_id=new_ulid(),
        agent=agent,
        objective="Write six.sh and run it.",
        channel=CHANNEL,
        activation_id=new_ulid(),
        bounds=SandboxTaskBounds(max_rounds=4),
    )
    started = time.perf_counter()
    report = await stack.client.execute_workflow(
        names.SANDBOX_TASK_WORKFLOW,
        task,
        id=names.sandbox_task_workflow_id(task.task_id),
        task_queue=queue,
        result_type=SandboxReport,
    )
    elapsed = time.perf_counter() - started
    assert report.status == "done" and report.steps == 2, report
    return elapsed


async def through_provider(provider: DockerProvider, agent: str) -> float:
    """Seconds for the same two steps through the execution provider, in-process."""
    started = time.perf_counter()
    await provider.write_file(agent, "six.sh", SCRIPT_TEXT.encode())
    result = await provider.run(agent, "sh six.sh")
    elapsed = time.perf_counter() - started
    assert "42" in result.stdout, result
    return elapsed


def docker_exec(host: str, container: str) -> float:
    """Seconds for the same two steps as two ``docker exec`` calls of the CLI."""
    binary = shutil.which("docker")
    assert binary is not None, "the docker CLI is not installed"
    env = {**os.environ, "DOCKER_HOST": host}
    started = time.perf_counter()
    subprocess.run(
        [binary, "exec", "-i", container, "sh", "-c", "cat > /work/six.sh"],
        input=SCRIPT_TEXT.encode(),
        check=True,
        env=env,
    )
    out = subprocess.run(
        [binary, "exec", "-w", "/work", container, "sh", "six.sh"],
        capture_output=True,
        check=True,
        env=env,
    )
    elapsed = time.perf_counter() - started
    assert b"42" in out.stdout, out
    return elapsed


def _row(name: str, values: list[float]) -> str:
    p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
    return f"| {name} | {len(values)} | {p50 * 1000:.0f} ms | {p95 * 1000:.0f} ms |"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docker-host", default=os.environ.get("DOCKER_HOST"))
    parser.add_argument("--image", default="persyn-sandbox:latest")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    async with engine(args.docker_host, args.image) as (host, image), bench_stack() as stack:
        script = stack.home / "script.json"
        script.write_text(json.dumps(SCRIPT))
        queue = f"bench-delegation-{new_ulid().lower()}"
        env = {
            "PERSYN_SCRIPTED_SCRIPT": str(script),
            "PERSYN_SANDBOX__DOCKER_HOST": host,
            "PERSYN_SANDBOX__IMAGE": image,
        }
        db = Database(stack.dsn)
        provider = DockerProvider(SandboxSettings(docker_host=host, image=image))
        agent = await new_agent(db, "deleg")
        try:
            async with worker_process(stack, queue, env):
                await delegated(stack, queue, agent)  # warm-up: provisions the environment
                task_times: list[float] = []
                provider_times: list[float] = []
                exec_times: list[float] = []
                for _ in range(args.runs):
                    task_times.append(await delegated(stack, queue, agent))
                    provider_times.append(await through_provider(provider, agent))
                    exec_times.append(
                        await asyncio.to_thread(docker_exec, host, resource_name(agent))
                    )
        finally:
            await provider.teardown(agent)
            await provider.close()
            await db.aclose()
    overhead = percentile(task_times, 0.5) - percentile(exec_times, 0.5)
    load = os.getloadavg()[0]
    record(
        "Delegation: one sandbox task against the same commands run directly",
        "A task that writes a script and runs it: three scripted model rounds at zero model "
        "latency (write_file, run_command, the report), a real worker process, tuned dev "
        f"server, embedded PostgreSQL, image `{image}` on a private dockerd. Load average at "
        f"the end: {load:.1f} on {os.cpu_count()} cores.\n\n"
        "| what | runs | p50 | p95 |\n|---|---|---|---|\n"
        + "\n".join(
            [
                _row("delegated task, start to result (report delivered)", task_times),
                _row("same two steps through the provider, in-process", provider_times),
                _row("same two steps as two `docker exec` CLI calls", exec_times),
            ]
        )
        + f"\n\nOverhead of delegation (p50 task minus p50 `docker exec`): "
        f"{overhead * 1000:.0f} ms, for three model-round activities, two step activities "
        "and the report's delivery, each a Temporal activity with its history events.",
    )


if __name__ == "__main__":
    asyncio.run(main())
