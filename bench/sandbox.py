"""What the sandbox costs: environment cold start and the warm command round trip.

Cold start: a new agent's first command (volume, its hand-over to the sandbox user, the
container, then ``true``). Warm: ``true`` in a running environment through the provider (its
``timeout`` wrapper, output streaming, exit-code inspection), against ``docker exec CONTAINER
true`` run directly (the CLI, a process per call) and one bare SDK exec. Target: warm p50
<= 150 ms.

Run against an engine: ``python -m bench.sandbox --docker-host unix:///PATH/docker.sock
[--image persyn-sandbox:latest] [--runtime runc,runsc] [--cold 10] [--warm 100]``. Several
runtimes are measured one after the other in the same run, so they share the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
import uuid
from typing import Any

import docker

from activities.sandbox.docker import DockerProvider
from activities.sandbox.paths import resource_name
from bench.harness import percentile, record
from schemas.sandbox import SandboxSettings

TARGET_P50 = 0.150


def _row(name: str, values: list[float], failed: int = 0) -> str:
    if not values:
        return f"| {name} | 0 | - | - | {failed} |"
    p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
    return f"| {name} | {len(values)} | {p50 * 1000:.0f} ms | {p95 * 1000:.0f} ms | {failed} |"


async def cold_starts(provider: DockerProvider, runs: int, limit: float) -> tuple[list[float], int]:
    """Seconds from nothing to a new agent's first command's result, and how many failed."""
    times, failed = [], 0
    for _ in range(runs):
        agent = f"bench-cold-{uuid.uuid4().hex[:8]}"
        started = time.perf_counter()
        result = await provider.run(agent, "true", timeout_seconds=limit)
        if result.exit_code == 0:
            times.append(time.perf_counter() - started)
        else:
            failed += 1
        await provider.teardown(agent)
    return times, failed


async def warm_round_trips(
    provider: DockerProvider, agent: str, runs: int, limit: float
) -> tuple[list[float], int]:
    """Seconds per ``true`` through the provider in a running environment, and the failures.

    A command that does not come back (gVisor losing the container's process) costs ``limit``
    and a container restart; it is counted, not timed.
    """
    await provider.run(agent, "true", timeout_seconds=limit)
    times, failed = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        result = await provider.run(agent, "true", timeout_seconds=limit)
        if result.exit_code == 0:
            times.append(time.perf_counter() - started)
        else:
            failed += 1
    return times, failed


def cli_execs(host: str, container: str, runs: int, limit: float) -> tuple[list[float], int]:
    """Seconds per ``docker exec CONTAINER true`` (the CLI, one process per call); failures."""
    binary = shutil.which("docker")
    if binary is None:
        return [], 0
    env = {**os.environ, "DOCKER_HOST": host}
    times, failed = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [binary, "exec", container, "true"], env=env, timeout=limit, capture_output=True
            )
        except subprocess.TimeoutExpired:
            failed += 1
            continue
        if done.returncode == 0:
            times.append(time.perf_counter() - started)
        else:
            failed += 1
    return times, failed


def _exec_true(container: Any, outcome: list[int | None]) -> None:
    try:
        outcome.append(container.exec_run(["true"]).exit_code)
    except docker.errors.DockerException:  # a container that stopped: counted as failed
        outcome.append(None)


def sdk_execs(host: str, container: str, runs: int, limit: float) -> tuple[list[float], int]:
    """Seconds per bare SDK ``exec_run`` (no limit wrapper, no streaming); failures.

    Each call runs on a daemon thread so an exec the runtime lost costs ``limit``, not the run.
    """
    client = docker.DockerClient(base_url=host)
    try:
        target = client.containers.get(container)
        times, failed = [], 0
        for _ in range(runs):
            outcome: list[int | None] = []
            started = time.perf_counter()
            caller = threading.Thread(target=_exec_true, args=(target, outcome), daemon=True)
            caller.start()
            caller.join(limit)
            if outcome == [0]:
                times.append(time.perf_counter() - started)
            else:
                failed += 1
        return times, failed
    finally:
        client.close()


async def measure(args: argparse.Namespace, runtime: str) -> tuple[list[str], float]:
    """The table rows of one runtime, and its warm p50 in seconds."""
    settings = SandboxSettings(docker_host=args.docker_host, image=args.image, runtime=runtime)
    provider = DockerProvider(settings)
    agent = f"bench-warm-{uuid.uuid4().hex[:8]}"
    try:
        cold, cold_failed = await cold_starts(provider, args.cold, args.command_timeout)
        warm, warm_failed = await warm_round_trips(provider, agent, args.warm, args.command_timeout)
        host = args.docker_host or "unix:///var/run/docker.sock"
        container = resource_name(agent)
        limit = args.command_timeout
        cli, cli_failed = await asyncio.to_thread(cli_execs, host, container, args.warm, limit)
        sdk, sdk_failed = await asyncio.to_thread(sdk_execs, host, container, args.warm, limit)
    finally:
        await provider.teardown(agent)
        await provider.close()
    rows = [
        _row(f"{runtime}: cold start (first command of a new agent)", cold, cold_failed),
        _row(f"{runtime}: warm round trip through the provider", warm, warm_failed),
        _row(f"{runtime}: `docker exec CONTAINER true` (CLI)", cli, cli_failed)
        if cli or cli_failed
        else f"| {runtime}: CLI | absent | | | |",
        _row(f"{runtime}: bare SDK exec_run", sdk, sdk_failed),
    ]
    return rows, percentile(warm, 0.5) if warm else math.inf


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docker-host", default=os.environ.get("DOCKER_HOST"))
    parser.add_argument("--image", default="persyn-sandbox:latest")
    parser.add_argument(
        "--runtime", default="runc", help="Runtimes to measure, comma-separated (runc,runsc)."
    )
    parser.add_argument("--cold", type=int, default=10)
    parser.add_argument("--warm", type=int, default=100)
    parser.add_argument(
        "--command-timeout",
        type=float,
        default=10.0,
        help="Seconds before a command that does not come back counts as failed.",
    )
    args = parser.parse_args()
    rows: list[str] = []
    verdicts: list[str] = []
    runtimes = [name.strip() for name in args.runtime.split(",") if name.strip()]
    for runtime in runtimes:
        found, warm_p50 = await measure(args, runtime)
        rows += found
        verdicts.append(f"{runtime} {'met' if warm_p50 <= TARGET_P50 else 'missed'}")
    load = os.getloadavg()[0]
    record(
        "Sandbox: cold start and warm command round trip",
        f"Image `{args.image}`, runtime {', '.join(runtimes)}, network none; a private dockerd "
        f"(overlay2). Load average at the end: {load:.1f} on {os.cpu_count()} cores.\n\n"
        "| what | runs | p50 | p95 | failed |\n|---|---|---|---|---|\n"
        + "\n".join(rows)
        + f"\n\nTarget warm p50 <= {TARGET_P50 * 1000:.0f} ms: {', '.join(verdicts)}.",
    )


if __name__ == "__main__":
    # Not asyncio.run: an exec gVisor lost can leave its reader thread blocked on the engine's
    # socket, and asyncio.run would wait for that thread at exit forever. The figures are
    # written once main() returns, so the process ends there.
    status = 1
    try:
        asyncio.new_event_loop().run_until_complete(main())
        status = 0
    except BaseException:
        traceback.print_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
