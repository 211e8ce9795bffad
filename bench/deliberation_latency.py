"""What deliberation costs a reply: time to transmit with no critique, deferred, and inline.

Runs on a private embedded stack and a real worker process with a scripted model whose every
call (respond, critique, refine, decide) takes the same fixed latency, so model round-trips on
the reply's path show up as multiples of it. One agent talks on three channels configured
``off``, ``deferred`` and ``inline``, one message on each in turn, so a machine whose load drifts
(shared cores) weighs on every mode alike. Each deferred reply's background deliberation is
drained before the next message, so it never overlaps a measurement.

* Target: deferred within 10% of no critique (no model round-trip before transmission).
* Inline: the latency it adds, overall and per template: the lens each inline turn drew is read
  back from ``speak_decisions``.

Every reply is substantive and addressed, so the decide step's judgment (one fast-model call)
is on the path in every mode alike.

Usage: ``python -m bench.deliberation_latency [--messages 60] [--latency-ms 300]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

from sqlmodel import col, select
from temporalio.api.enums.v1 import EventType

from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from contract import names
from schemas.events import ChannelRef, InboundEvent, Outcome, Receipt, Speaker
from schemas.ids import new_ulid
from store.db import Database
from store.tables.deliberation import SpeakDecisionRow
from temporal import inbox

REPLY = (
    "We agreed last week that the report goes out on Friday, so I will draft the summary "
    "tonight and send it to you for a last look."
)
OBJECTION = {
    "objections": [
        {"type": "confabulation", "span": "We agreed last week", "explanation": "No record."}
    ]
}


def script(latency_ms: float) -> dict[str, object]:
    def rule(task: str, reply: str) -> dict[str, object]:
        return {"task": task, "reply": reply, "delay_ms": latency_ms}

    return {
        "rules": [
            rule("respond", REPLY),
            rule("critique", json.dumps(OBJECTION)),
            rule("refine", "I believe the report is due Friday; I'll draft the summary tonight."),
            rule("decide", json.dumps({"speak": True, "reason": "I was asked."})),
        ]
    }


async def send(stack: BenchStack, queue: str, handle: str, channel: str) -> tuple[float, Receipt]:
    event = InboundEvent(
        event_id=new_ulid(),
        channel=ChannelRef(service="terminal", channel=channel),
        speaker=Speaker(speaker_id="bench"),
        text="what did we agree about the report?",
    )
    started = time.perf_counter()
    receipt = await inbox.submit(stack.client, handle=handle, event=event, task_queue=queue)
    elapsed = (time.perf_counter() - started) * 1000
    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    return elapsed, receipt


async def drain(stack: BenchStack, receipt: Receipt) -> int:
    """Wait for the activation to end: released, it runs a deferred deliberation itself.

    Returns:
        The model calls the activation scheduled before its reply was out: every activity it
        scheduled before telling its agent the event was done (that signal follows transmit).
    """
    assert receipt.marker is not None and receipt.marker.activation_id
    activation = receipt.marker.activation_id
    handle = stack.client.get_workflow_handle(names.activation_workflow_id(activation))
    await handle.result()
    calls = 0
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
            break
        calls += event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    return calls


def worker_env(script_file: Path, **settings: object) -> dict[str, str]:
    # No encoder: recall's cost is the same in every mode and measured elsewhere.
    env = {"PERSYN_SCRIPTED_SCRIPT": str(script_file), "PERSYN_ENCODER": "none"}
    for field, value in settings.items():
        env[f"PERSYN_DELIBERATION__{field.upper()}"] = json.dumps(value)
    return env


MODES = ("off", "deferred", "inline")


async def drawn_lenses(db: Database, activations: list[str]) -> list[str]:
    """The lens each inline activation drew (besides the provenance gate), in order."""
    async with db.session() as session:
        rows = {
            row.activation_id: row
            for row in (
                await session.exec(
                    select(SpeakDecisionRow).where(
                        col(SpeakDecisionRow.activation_id).in_(activations)
                    )
                )
            ).all()
        }
    return [next(lens for lens in rows[a].lenses if lens != "provenance") for a in activations]


async def measure(
    stack: BenchStack, db: Database, script_file: Path, n: int
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, set[int]]]:
    """Time to transmit per mode (index i of each list is round i), per drawn template for
    inline, and the model calls each mode made before its reply was out."""
    queue = f"delib-{uuid.uuid4().hex[:6]}"
    channels = {f"terminal:{mode}": mode for mode in MODES}
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    inline_runs: list[str] = []
    calls: dict[str, set[int]] = {mode: set() for mode in MODES}
    async with worker_process(stack, queue, worker_env(script_file, channels=channels)):
        handle = await new_agent(db, "d")
        for i in range(n + 3):
            for mode in MODES:
                elapsed, receipt = await send(stack, queue, handle, mode)
                calls[mode].add(await drain(stack, receipt))
                assert receipt.marker is not None and receipt.marker.activation_id
                assert (receipt.marker.text == REPLY) is (mode != "inline")
                if i >= 3:  # warm-up: imports, pools, caches
                    times[mode].append(elapsed)
                    if mode == "inline":
                        inline_runs.append(receipt.marker.activation_id)
    per_lens: dict[str, list[float]] = {}
    for lens, elapsed in zip(await drawn_lenses(db, inline_runs), times["inline"], strict=True):
        per_lens.setdefault(lens, []).append(elapsed)
    return times, dict(sorted(per_lens.items())), calls


def summary(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 0.5):.0f} ms, p95 {percentile(values, 0.95):.0f} ms, "
        f"mean {statistics.fmean(values):.0f} ms"
    )


def paired(times: dict[str, list[float]], mode: str) -> float:
    """Median over rounds of (``mode`` - off) in the same round: load drift cancels out."""
    return statistics.median(m - o for m, o in zip(times[mode], times["off"], strict=True))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--latency-ms", type=float, default=300.0)
    args = parser.parse_args()
    async with bench_stack() as stack:
        script_file = stack.home / "script.json"
        script_file.write_text(json.dumps(script(args.latency_ms)), encoding="utf-8")
        db = Database(stack.dsn)
        times, per_lens, calls = await measure(stack, db, script_file, args.messages)
        await db.aclose()
    off = times["off"]
    base = percentile(off, 0.5)

    def added(values: list[float]) -> str:
        extra = percentile(values, 0.5) - base
        return f"{extra:+.0f} ms ({extra / args.latency_ms:+.1f} calls)"

    def row(label: str, mode: str) -> str:
        delta = paired(times, mode)
        return (
            f"| {label} | {', '.join(map(str, sorted(calls[mode])))} | {summary(times[mode])} | "
            f"{delta:+.0f} ms ({delta / args.latency_ms:+.1f} calls) |"
        )

    lens_rows = "\n".join(
        f"| inline, drew {lens} (n={len(values)}) | | {summary(values)} | {added(values)} "
        "(p50 vs p50) |"
        for lens, values in per_lens.items()
    )
    deferred_delta = paired(times, "deferred")
    share = f"{deferred_delta / base:+.1%}"
    verdict = "met" if abs(deferred_delta) <= 0.10 * base else "NOT met"
    body = f"""
`python -m bench.deliberation_latency --messages {args.messages} --latency-ms {args.latency_ms:g}`:
scripted model, every call {args.latency_ms:g} ms. Time to transmit is submit to receipt (the
reply is out and its marker recorded). One worker process (tuned dev server), one agent on three
channels (off, deferred, inline), one message on each in turn, {args.messages} rounds after 3
warm-up ones; each deferred reply's background deliberation drained before the next round.
Every reply is substantive and addressed, so the decide step's judgment (one call) is on the
path in every mode. Model calls before transmission are counted from each activation's history
(activities scheduled before it reported the event done).

| mode | model calls before transmission | time to transmit | added over no critique (a) |
|---|---|---|---|
| no critique (off) | {", ".join(map(str, sorted(calls["off"])))} | {summary(off)} | |
{row("deferred (default)", "deferred")}
{row("inline, any template", "inline")}
{lens_rows}

(a) the median over rounds of each round's difference, so load drift on shared cores cancels.

Deferred versus no critique: {deferred_delta:+.0f} ms per round at the median, {share} of no
critique's p50 (target within 10%: {verdict}); the same model calls before transmission.
Inline adds one critique round (the provenance gate and the drawn template run concurrently)
and one refinement: two model calls whichever template was drawn, so per-template differences
are noise at these sample sizes.
"""
    record("Deliberation: time to transmit by mode and template", body)


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    os._exit(0)
