"""Metering and tracing overhead per model call, adapters on versus off, in one run.

A zero-latency scripted model isolates the gateway's own cost. Three gateways run the same
requests, interleaved in blocks so drift on a shared machine hits all of them alike:

* ``off``: no meters, no price table, no tracer;
* ``tracing only, metadata``: the embedded stack's default tracing (spans to the span file,
  content policy ``metadata``) and no meters, to price keeping tracing on by default;
* ``on, metadata``: Prometheus counters + JSON event log + price table + tracing to the span
  file, content policy ``metadata``;
* ``on, full``: the same with prompts and replies recorded on spans.

Two figures per configuration: the caller-visible latency of ``gateway.complete`` (median,
p99), which is what a reply waits for, and the amortized cost per call of a whole block
including draining the meters' queues and exporting its spans (the background work a call
causes, paid off the reply's path but on the same machine). ``--dsn`` adds the ledger meter.

``--turns N`` also prices keeping tracing on for whole turns (``bench.tracing_turns``): two real
workers, tracing off and on, on a private stack.

Usage: ``python -m bench.metering_overhead [--calls 6000] [--dsn postgresql+psycopg://...]
[--turns 200]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from activities.gateway.gateway import ModelGateway
from activities.gateway.providers.scripted import ScriptedProvider
from activities.gateway.registry import ModelRegistry
from bench.harness import machine
from contract import attribution
from observability import tracing
from observability.metering.event_log import EventLogMeter
from observability.metering.hub import MeterHub, UsageMeter
from observability.metering.ledger import LedgerMeter
from observability.metering.prometheus import PrometheusMeter
from schemas.ids import new_ulid
from schemas.models import Attribution, ChatMessage, ModelRequest, ProviderName, TaskType
from schemas.pricing import ModelPrice, PriceTable
from schemas.settings import ContentPolicy, Settings, TraceExporterName
from store.db import Database

RESULTS = Path(__file__).parent / "RESULTS.md"
BLOCK = 100


@dataclass
class Config:
    """One gateway under test and what it measured."""

    name: str
    gateway: ModelGateway
    hub: MeterHub | None = None
    traced: tracing.Tracing | None = None
    latencies_ms: list[float] = field(default_factory=list)
    block_ms: list[float] = field(default_factory=list)


def request() -> ModelRequest:
    """A realistic prompt: a 4 kB system instruction and eight turns of dialog."""
    system = "You are a careful agent with a long memory. " * 90
    turns = [
        ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"turn {i}: " + "x" * 240)
        for i in range(8)
    ]
    return ModelRequest(task=TaskType.RESPOND, system=system, messages=turns)


def settings(home: Path, content: ContentPolicy | None, name: str) -> Settings:
    exporters: list[TraceExporterName] = ["file"] if content is not None else []
    return Settings(
        home=home,
        provider="scripted",
        embedded=False,
        tracing_exporters=exporters,
        tracing_file=home / f"spans-{name.replace(' ', '').replace(',', '-')}.jsonl",
        tracing_content=content or "metadata",
    )


def build(
    name: str, home: Path, content: ContentPolicy | None, dsn: str | None, *, metered: bool = True
) -> Config:
    config = settings(home, content, name)
    registry = ModelRegistry.from_settings(config)
    providers = {ProviderName.SCRIPTED: ScriptedProvider()}
    if content is None:
        return Config(name, ModelGateway(registry, providers))
    if not metered:
        traced = tracing.setup(config)
        return Config(name, ModelGateway(registry, providers, tracing=traced), traced=traced)
    meters: list[UsageMeter] = [
        PrometheusMeter(port=None),
        EventLogMeter(home / f"usage-{content}.jsonl"),
    ]
    if dsn:
        meters.append(LedgerMeter(Database(dsn)))
    hub = MeterHub(meters)
    prices = PriceTable(models={"scripted": ModelPrice(input=3.0, output=15.0)})
    traced = tracing.setup(config)
    gateway = ModelGateway(registry, providers, meters=hub, prices=prices, tracing=traced)
    return Config(name, gateway, hub, traced)


async def run_block(config: Config, prompt: ModelRequest) -> None:
    started = time.perf_counter()
    for _ in range(BLOCK):
        before = time.perf_counter()
        await config.gateway.complete(prompt)
        config.latencies_ms.append((time.perf_counter() - before) * 1000)
        await asyncio.sleep(0)  # let the meters' lanes run between calls, as in a worker
    if config.hub is not None:
        await config.hub.flush(timeout=30)
    if config.traced is not None:
        await asyncio.to_thread(config.traced.flush)
    config.block_ms.append((time.perf_counter() - started) * 1000)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def table(configs: list[Config]) -> str:
    off = configs[0]
    base_median = statistics.median(off.latencies_ms)
    base_block = statistics.median(off.block_ms) / BLOCK
    rows = [
        "| configuration | calls | median ms | p99 ms | overhead (median) ms "
        "| amortized incl. background ms/call | overhead ms/call |",
        "|---|---|---|---|---|---|---|",
    ]
    for config in configs:
        median = statistics.median(config.latencies_ms)
        block = statistics.median(config.block_ms) / BLOCK
        rows.append(
            f"| {config.name} | {len(config.latencies_ms)} | {median:.3f} "
            f"| {percentile(config.latencies_ms, 0.99):.3f} | {median - base_median:+.3f} "
            f"| {block:.3f} | {block - base_block:+.3f} |"
        )
    return "\n".join(rows)


async def main(calls: int, dsn: str | None) -> str:
    with tempfile.TemporaryDirectory(prefix="persyn-bench-") as tmp:
        home = Path(tmp)
        configs = [
            build("off", home, None, dsn),
            build("tracing only, metadata", home, "metadata", dsn, metered=False),
            build("on, metadata", home, "metadata", dsn),
            build("on, full content", home, "full", dsn),
        ]
        prompt = request()
        token = attribution.use(
            Attribution(agent="bench", channel="terminal:bench", conversation=new_ulid())
        )
        try:
            for config in configs:  # warm-up: imports, first exports, counters' label sets
                await run_block(config, prompt)
                config.latencies_ms.clear()
                config.block_ms.clear()
            for _ in range(calls // BLOCK):
                turn = attribution.use(Attribution(agent="bench", activation=new_ulid()))
                for config in configs:
                    await run_block(config, prompt)
                attribution.reset(turn)
        finally:
            attribution.reset(token)
            for config in configs:
                if config.hub is not None:
                    await config.hub.aclose()
            tracing.shutdown()
    return table(configs)


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=6000, help="Calls per configuration.")
    parser.add_argument("--dsn", help="Also meter into this PostgreSQL ledger.")
    parser.add_argument(
        "--turns", type=int, default=0, help="Also time whole turns, traced or not."
    )
    args = parser.parse_args()
    body = asyncio.run(main(args.calls, args.dsn))
    if args.turns:
        from bench.tracing_turns import measure

        turns = asyncio.run(measure(args.turns))
        body += (
            "\n\nWhole turns, tracing off versus the embedded default (file exporter, metadata), "
            f"two real workers on one private stack, blocks of 10 interleaved:\n\n{turns}"
        )
    ledger = "with" if args.dsn else "without"
    command = f"python -m bench.metering_overhead --calls {args.calls}"
    command += " --dsn DSN" if args.dsn else ""
    command += f" --turns {args.turns}" if args.turns else ""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = (
        f"\n## Metering and tracing overhead per model call ({stamp})\n\n"
        f"Machine: {machine()}\n\n"
        f"`{command}`: zero-latency scripted model, realistic prompt (4 kB system + "
        f"8 turns), blocks of {BLOCK} interleaved, "
        f"{ledger} the ledger meter. Target: overhead (median) <= 1 ms.\n\n{body}\n"
    )
    print(section)
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write(section)


if __name__ == "__main__":
    cli()
