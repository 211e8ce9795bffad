"""MCP tool-call overhead: the same function called in-process and through a tool server.

The demo server's ``add`` (``tests/mcp/servers/demo.py``) is called three ways, in interleaved
blocks so drift on a shared machine hits all of them alike:

* ``in-process``: the Python function itself, awaited from the event loop;
* ``stdio``: the registry tool ``mcp__demo__add`` as the invoke activity runs it (argument
  model, reconnecting session, result rendering) against the server as a child process;
* ``http``: the same against the server over streamable HTTP on the loopback.

The overhead is what the tool-server path adds: its p50 and p95 minus the in-process ones.
Target: p50 overhead <= 20 ms.

Usage: ``python -m bench.mcp [--calls 300] [--no-record]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable

from activities.tools.mcp import ToolServers
from bench.harness import record
from tests.mcp.conftest import call, http_server, running_http_server, settings, stdio_server
from tests.mcp.servers.demo import add

BLOCK = 50
TARGET_MS = 20.0


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _time(fn: Callable[[], Awaitable[object]], n: int, out: list[float]) -> None:
    for _ in range(n):
        started = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - started) * 1000)


async def measure(calls: int) -> dict[str, list[float]]:
    """Milliseconds per call for each path."""
    async with running_http_server() as web:
        servers = await ToolServers.connect(settings(stdio_server(), http_server(web.port)))
        try:
            tools = {tool.name: tool for tool in servers.tools()}
            stdio, http = tools["mcp__demo__add"], tools["mcp__web__add"]

            async def in_process() -> object:
                return add(2, 40)

            paths: dict[str, Callable[[], Awaitable[object]]] = {
                "in-process": in_process,
                "stdio": lambda: call(stdio, a=2, b=40),
                "http": lambda: call(http, a=2, b=40),
            }
            for fn in paths.values():  # warm up: imports, connections, caches
                await _time(fn, 10, [])
            timings: dict[str, list[float]] = {name: [] for name in paths}
            for _ in range(max(1, calls // BLOCK)):
                for name, fn in paths.items():
                    await _time(fn, BLOCK, timings[name])
            return timings
        finally:
            await servers.aclose()


def report(timings: dict[str, list[float]]) -> str:
    """The results table, overhead against the in-process call, and the verdict."""
    base = timings["in-process"]
    base50, base95 = statistics.median(base), _quantile(base, 0.95)
    rows = [
        "| path | calls | p50 | p95 | overhead p50 | overhead p95 |",
        "|---|---|---|---|---|---|",
    ]
    verdict = []
    for name, values in timings.items():
        p50, p95 = statistics.median(values), _quantile(values, 0.95)
        extra = "" if name == "in-process" else f"{p50 - base50:.2f} ms | {p95 - base95:.2f} ms"
        rows.append(
            f"| {name} | {len(values)} | {p50:.3f} ms | {p95:.3f} ms | {extra or '- | -'} |"
        )
        if name != "in-process":
            met = "met" if p50 - base50 <= TARGET_MS else "NOT met"
            verdict.append(f"{name} {met}")
    load = os.getloadavg()[0]
    return (
        "The demo server's `add` called in-process and as the registry tool (argument model, "
        "reconnecting session, rendering) over stdio and streamable HTTP (loopback), "
        f"interleaved in blocks of {BLOCK}. mcp SDK 2.x, protocol negotiated automatically.\n"
        f"Load average at the end: {load:.1f} on {os.cpu_count()} cores.\n\n"
        + "\n".join(rows)
        + f"\n\nTarget overhead p50 <= {TARGET_MS:g} ms: {', '.join(verdict)}."
    )


def main() -> None:
    """Measure, print and (unless ``--no-record``) append to bench/RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    body = report(asyncio.run(measure(args.calls)))
    if args.no_record:
        print(body)
    else:
        record("MCP tool-call overhead against an in-process call", body)


if __name__ == "__main__":
    main()
