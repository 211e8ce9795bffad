"""What the sandbox costs: environment cold start and the warm command round trip.

Cold start: a new agent's first command (volume, its hand-over to the sandbox user, the
container, then ``true``). Warm: ``true`` in a running environment through the provider (its
``timeout`` wrapper, output streaming, exit-code inspection), against ``docker exec CONTAINER
true`` run directly (the CLI, a process per call) and one bare SDK exec. Target: warm p50
<= 150 ms.

Run against an engine: ``python -m bench.sandbox --docker-host unix:///PATH/docker.sock
[--image persyn-sandbox:latest] [--cold 10] [--warm 100]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import time
import uuid

import docker

from activities.sandbox.docker import DockerProvider
from activities.sandbox.paths import resource_name
from bench.harness import percentile, record
from schemas.sandbox import SandboxSettings

TARGET_P50 = 0.150


def _row(name: str, values: list[float]) -> str:
    p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
    return f"| {name} | {len(values)} | {p50 * 1000:.0f} ms | {p95 * 1000:.0f} ms |"


async def cold_starts(provider: DockerProvider, runs: int) -> list[float]:
    """Seconds from nothing to a new agent's first command's result."""
    times = []
    for _ in range(runs):
        agent = f"bench-cold-{uuid.uuid4().hex[:8]}"
        started = time.perf_counter()
        await provider.run(agent, "true")
        times.append(time.perf_counter() - started)
        await provider.teardown(agent)
    return times


async def warm_round_trips(provider: DockerProvider, agent: str, runs: int) -> list[float]:
    """Seconds per ``true`` through the provider in a running environment."""
    await provider.run(agent, "true")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = await provider.run(agent, "true")
        times.append(time.perf_counter() - started)
        assert result.exit_code == 0, result
    return times


def cli_execs(host: str, container: str, runs: int) -> list[float]:
    """Seconds per ``docker exec CONTAINER true`` (the CLI, one process per call)."""
    binary = shutil.which("docker")
    if binary is None:
        return []
    env = {**os.environ, "DOCKER_HOST": host}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([binary, "exec", container, "true"], check=True, env=env)
        times.append(time.perf_counter() - started)
    return times


def sdk_execs(host: str, container: str, runs: int) -> list[float]:
    """Seconds per bare SDK ``exec_run`` (no limit wrapper, no streaming)."""
    client = docker.DockerClient(base_url=host)
    try:
        target = client.containers.get(container)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            target.exec_run(["true"])
            times.append(time.perf_counter() - started)
        return times
    finally:
        client.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docker-host", default=os.environ.get("DOCKER_HOST"))
    parser.add_argument("--image", default="persyn-sandbox:latest")
    parser.add_argument("--cold", type=int, default=10)
    parser.add_argument("--warm", type=int, default=100)
    args = parser.parse_args()
    settings = SandboxSettings(docker_host=args.docker_host, image=args.image)
    provider = DockerProvider(settings)
    agent = f"bench-warm-{uuid.uuid4().hex[:8]}"
    try:
        cold = await cold_starts(provider, args.cold)
        warm = await warm_round_trips(provider, agent, args.warm)
        host = args.docker_host or "unix:///var/run/docker.sock"
        container = resource_name(agent)
        cli = await asyncio.to_thread(cli_execs, host, container, args.warm)
        sdk = await asyncio.to_thread(sdk_execs, host, container, args.warm)
    finally:
        await provider.teardown(agent)
        await provider.close()
    load = os.getloadavg()[0]
    verdict = "met" if percentile(warm, 0.5) <= TARGET_P50 else "missed"
    rows = [
        _row("cold start (first command of a new agent)", cold),
        _row("warm round trip through the provider", warm),
        _row("`docker exec CONTAINER true` (CLI)", cli) if cli else "| CLI | absent | | |",
        _row("bare SDK exec_run", sdk),
    ]
    record(
        "Sandbox: cold start and warm command round trip",
        f"Image `{args.image}`, runtime {settings.runtime}, network none; a private dockerd "
        f"(overlay2). Load average at the end: {load:.1f} on {os.cpu_count()} cores.\n\n"
        "| what | runs | p50 | p95 |\n|---|---|---|---|\n"
        + "\n".join(rows)
        + f"\n\nTarget warm p50 <= {TARGET_P50 * 1000:.0f} ms: {verdict}.",
    )


if __name__ == "__main__":
    asyncio.run(main())
