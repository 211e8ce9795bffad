"""Chaos and soak: N agents on the embedded stack while the worker, Temporal and PostgreSQL die.

``persyn up`` starts a private stack (temporary ``PERSYN_HOME``, free ports); 20 agents (by
default) talk in short sessions on three channels for 60 minutes (by default), one message in
flight per agent. One process at a time is killed with SIGKILL at a random moment (worker,
Temporal server, PostgreSQL, each kind in turn) and restored the way an operator would: the
supervisor restarts the worker, ``persyn up`` brings back the others. Invariants, sampled every
20 s and judged at the end (see :mod:`systemtests.soak.checks`): no input lost, no reply sent twice,
no workflow stuck, memory bounded by culling with every important memory kept, the deleted
heartbeat stays deleted, worker RSS and agent history lengths flat, no table outside dialog and
memory growing with the messages, and the per-message run records gone when the purge runs as
if their retention window had passed (:mod:`systemtests.soak.retention`).

Figures: messages answered, faults by kind, violations (target 0), p95 latency before and after
each fault, recovery time (until a message submitted after the fault is answered at normal
latency again; target 30 s), unplanned restarts (a native crash of the model server shows here).

With ``--hostile-every S`` a hostile event (:mod:`systemtests.soak.hostile`) joins the traffic every
S seconds: each must be refused in one line within the inbox's bound, and none stored.

Usage: ``python -m systemtests.soak [--agents 20] [--minutes 60] [--provider scripted|local]
[--seed 1] [--grace-minutes 4] [--hostile-every S] [--record] [--keep]``; exits 1 if any
invariant was violated.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter

from bench.harness import percentile, record, replay_speed_ms
from systemtests.soak.hostile import hostile_summary
from systemtests.soak.load import Sent
from systemtests.soak.run import Fault, SoakConfig, SoakReport, run_soak

WINDOW_S = 60.0
"""Latency before a fault is taken over this window; after recovery, over the next."""


@dataclass(frozen=True)
class FaultFigures:
    """Latency around one fault, and how busy the machine was before it."""

    fault: Fault
    p95_before: float | None
    p95_after: float | None
    recovery_s: float | None
    cpu_before: float | None = None
    """Median busy % of the CPU samples in the window before the fault: a recovery on a
    machine already saturated times a backlog draining, not the fault."""


def _quantile(sent: list[Sent], q: float) -> float | None:
    latencies = [s.latency for s in sent if s.latency is not None]
    return percentile(latencies, q) if latencies else None


def _p50(sent: list[Sent]) -> float | None:
    return _quantile(sent, 0.5)


def _p95(sent: list[Sent]) -> float | None:
    return _quantile(sent, 0.95)


def fault_figures(report: SoakReport) -> list[FaultFigures]:
    """For each fault, from the probe's messages: p95 before, recovery time, p95 recovered.

    Recovery is the time from the kill until a probe message submitted after it is answered
    at normal latency again (at most twice the p95 before, or half a second more).
    """
    probes = [s for s in report.sent if s.probe and s.done is not None]
    figures = []
    for fault in report.faults:
        before = [s for s in probes if fault.at - WINDOW_S <= (s.done or 0) < fault.at]
        p95_before = _p95(before)
        normal = max(2 * p95_before, p95_before + 0.5) if p95_before is not None else None
        after = sorted((s for s in probes if s.submitted >= fault.at), key=lambda s: s.submitted)
        back = [s for s in after if normal is not None and (s.latency or 0) <= normal]
        recovery = (back[0].done - fault.at) if back and back[0].done is not None else None
        settled = fault.at + (recovery or 0.0)
        window = [s for s in after if settled <= s.submitted < settled + WINDOW_S]
        busy = [
            pct
            for at, pct in report.samples.cpu[1:]  # the first covers nothing before it
            if fault.at - WINDOW_S <= report.began + at < fault.at
        ]
        cpu = percentile(busy, 0.5) if busy else None
        figures.append(FaultFigures(fault, p95_before, _p95(window), recovery, cpu))
    return figures


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def _worst(times: list[float | None]) -> str:
    # A fault after which latency never came back counts as the worst.
    if any(t is None for t in times):
        return "not recovered"
    return _s(max(t for t in times if t is not None))


def _cpu(report: SoakReport) -> str:
    """Median busy % of the CPU samples in each tenth of the run."""
    samples = report.samples.cpu[1:]  # the first covers nothing before it
    if not samples:
        return "n/a"
    end = max(at for at, _ in samples) or 1.0
    tenths: list[list[float]] = [[] for _ in range(10)]
    for at, busy in samples:
        tenths[min(9, int(10 * at / end))].append(busy)
    return " ".join(f"{percentile(t, 0.5):.0f}%" if t else "-" for t in tenths)


def render(report: SoakReport, speed_ms: tuple[float, float] | None = None) -> str:
    """The report as Markdown for RESULTS.md and the terminal.

    Args:
        report: What the run saw.
        speed_ms: :func:`bench.harness.replay_speed_ms` before and after the run.
    """
    config = report.config
    answered = [s for s in report.sent if s.done is not None]
    outcomes: dict[str, int] = {}
    for s in answered:
        outcomes[s.outcome or "none"] = outcomes.get(s.outcome or "none", 0) + 1
    kinds: dict[str, int] = {}
    for f in report.faults:
        kinds[f.kind.value] = kinds.get(f.kind.value, 0) + 1
    lines = [
        f"Provider {config.provider}, {config.agents} agents, {report.duration_s / 60:.1f} min "
        f"(configured {config.minutes:g} min), seed {config.seed}; the last replies were "
        f"awaited up to {config.grace_s / 60:g} min.",
        "",
        f"- messages sent {len(report.sent)}, answered {len(answered)} "
        f"({', '.join(f'{k} {v}' for k, v in sorted(outcomes.items()))}); "
        f"overall p50 {_s(_p50(answered))}, p95 {_s(_p95(answered))}",
        f"- faults injected: {', '.join(f'{k} {v}' for k, v in sorted(kinds.items())) or 'none'}",
        f"- invariant violations: {len(report.violations)}",
        f"- events answered by more than one activation: {report.redone_events}",
        f"- unplanned restarts by the supervisor: {report.native_restarts or 'none'}",
        f"- submissions retried during outages: {report.submit_errors or 'none'}",
    ]
    if config.hostile_every_s:
        lines.append(hostile_summary(report.hostile))
    if report.memory is not None:
        m = report.memory
        lines.append(
            f"- memory: {m.live} records for {m.person_turns} person turns; "
            f"{len(m.important_ids)} important kept"
        )
    rss = report.samples.rss_growth()
    if rss:
        lines.append(
            "- worker RSS after warm-up -> at end (MiB): "
            + ", ".join(f"{a / 1024:.0f} -> {b / 1024:.0f}" for a, b in rss.values())
        )
    lines.append(f"- longest agent history: {report.samples.longest_history()} events")
    if report.samples.cpu:
        lines.append("- machine CPU busy per 20 s sample, by tenth of the run: " + _cpu(report))
    if speed_ms is not None:
        lines.append(
            f"- machine speed: recorded histories replayed at {speed_ms[0]:.0f} ms of CPU per "
            f"1,000 events before the run and {speed_ms[1]:.0f} ms after (lower is faster)"
        )
    if len(report.samples.tables) >= 2:
        (m0, first), (m1, last) = report.samples.tables[0], report.samples.tables[-1]
        grew = {t: last[t] - first.get(t, 0) for t in last if last[t] != first.get(t, 0)}
        lines.append(
            f"- table rows added over {m1 - m0} answered messages: "
            + ", ".join(f"{t} +{n}" for t, n in sorted(grew.items(), key=lambda kv: -kv[1]))
        )
    if report.month_later is not None:
        later = report.month_later
        grown = ", ".join(f"{t} {n}" for t, n in sorted(later.before.items()) if n)
        left = ", ".join(f"{t} {n}" for t, n in sorted(later.survivors.items())) or "nothing"
        lines.append(
            f"- run records at the end: {grown or 'none'}; purged as a month later: {left} "
            f"left (and {later.kept_for_pickup} outbox messages kept for pickup)"
        )
    by_kind: dict[str, list[float | None]] = {}
    for fig in fault_figures(report):
        by_kind.setdefault(fig.fault.kind.value, []).append(fig.recovery_s)
    lines.append(
        "- recovery by kind (worst; target 30 s): "
        + ", ".join(f"{kind} {_worst(times)}" for kind, times in sorted(by_kind.items()))
    )
    lines += [
        "",
        "| fault | at (s) | CPU busy before | restore | p95 before | recovery | p95 after |",
        "|---|---|---|---|---|---|---|",
    ]
    start = report.sent[0].submitted if report.sent else 0.0
    for fig in fault_figures(report):
        f = fig.fault
        cpu = "n/a" if fig.cpu_before is None else f"{fig.cpu_before:.0f}%"
        lines.append(
            f"| {f.kind.value} | {f.at - start:.0f} | {cpu} | {_s(f.restore_s)} "
            f"| {_s(fig.p95_before)} | {_s(fig.recovery_s)} | {_s(fig.p95_after)} |"
        )
    if report.violations:
        lines += ["", "Violations:", *(f"- {v}" for v in report.violations[:40])]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m systemtests.soak", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--agents", type=int, default=20, help="Agents talking at once.")
    parser.add_argument("--minutes", type=float, default=60.0, help="How long the load runs.")
    parser.add_argument("--provider", default="scripted", help="scripted, or local (SmolLM2).")
    parser.add_argument("--seed", type=int, default=1, help="Seeds the faults and the traffic.")
    parser.add_argument(
        "--grace-minutes",
        type=float,
        default=4.0,
        help="After the load stops, wait up to this long for the last replies before judging "
        "them lost (a local model answers each in minutes, behind its background calls).",
    )
    parser.add_argument(
        "--hostile-every",
        type=float,
        default=None,
        metavar="SECONDS",
        help="Mix a hostile event (NUL, lone surrogates, deep nesting, ...) into the traffic "
        "this often; each must be refused in one line and none may hold an inbox.",
    )
    parser.add_argument("--record", action="store_true", help="Append the figures to RESULTS.md.")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="Keep the stack's home (logs, database, Temporal's state) to examine afterwards.",
    )
    args = parser.parse_args()
    if args.agents < 1 or args.minutes <= 0 or args.grace_minutes <= 0:
        parser.error("--agents must be at least 1, --minutes and --grace-minutes positive")
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    # The client retries through every outage on purpose: its per-retry warnings are noise here.
    quiet = TelemetryConfig(logging=LoggingConfig(filter=TelemetryFilter("ERROR", "ERROR")))
    Runtime.set_default(Runtime(telemetry=quiet))
    config = SoakConfig(
        agents=args.agents,
        minutes=args.minutes,
        provider=args.provider,
        seed=args.seed,
        grace_s=args.grace_minutes * 60,
        hostile_every_s=args.hostile_every,
    )
    with contextlib.ExitStack() as scope:
        prefix = "persyn-soak-"
        if args.keep:
            tmp = tempfile.mkdtemp(prefix=prefix)
        else:
            tmp = scope.enter_context(tempfile.TemporaryDirectory(prefix=prefix))
        home = Path(tmp)
        home.chmod(0o755)  # the embedded PostgreSQL runs as another user
        before = asyncio.run(replay_speed_ms())
        report = asyncio.run(run_soak(config, home))
        text = render(report, (before, asyncio.run(replay_speed_ms())))
        if args.record:
            record(f"Soak: {config.provider} provider, {config.agents} agents", text)
        else:
            print(text)
        if args.keep:
            print(f"kept the stack's home: {home} (logs under {home / 'logs'})")
    sys.stdout.flush()
    # Clients and workers at interpreter exit can abort natively (INFRA.md): leave at once.
    os._exit(1 if report.violations else 0)
