"""The pre-model path's three local activities, as plain awaits: their CPU and time per message.

Before the model call a message runs three local activities, one in each workflow's task: the
agent's speaker resolution, the conversation's turn write-through and the activation's context
assembly. This benchmark awaits the very activities a worker registers (``workers.build``), in
that order, against one embedded PostgreSQL, with no Temporal in between, and reads the process's
CPU time around each: it holds under load, where whole-message figures swing by more than the
change being measured.

Each *variant* is a source tree (the checkout, or a ``git worktree`` of an earlier commit); its
activities run in a child process importing that tree, in alternating blocks.
Usage: ``python -m bench.premodel_activities --variant before=/tmp/old --variant after=.``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

STEPS = ("resolve_speaker", "record_turn", "assemble")

T = TypeVar("T")


def now() -> datetime:
    """The wall clock, as the workflows would pass it."""
    return datetime.now(UTC)


async def _child(dsn: str, messages: int, warmup: int) -> dict[str, list[float]]:
    """Run the three activities ``warmup + messages`` times; CPU and wall ms of each step."""
    from bench.harness import BenchStack, new_agent
    from bench.plain_pipeline import CHANNEL, make_event, worker_activities
    from schemas.activation import AssembleContextInput
    from schemas.dialog import DialogTurn, Role
    from schemas.ids import new_ulid
    from schemas.records import OpenConversationInput, RecordTurnInput, ResolveSpeakerInput
    from workers.build import build_dependencies

    home = Path(tempfile.mkdtemp(prefix="persyn-premodel-"))
    stack = BenchStack(home=home, temporal_address="127.0.0.1:1", dsn=dsn, client=None)  # type: ignore[arg-type]
    deps = build_dependencies(stack.settings(), dsn=dsn)
    run = worker_activities(deps)
    handle = await new_agent(deps.db)
    conversation = new_ulid()
    await run["StoreActivities.open_conversation"](
        OpenConversationInput(
            conversation_id=conversation, agent=handle, channel=CHANNEL, opened_at=now()
        )
    )
    out: dict[str, list[float]] = {f"{s}_{k}": [] for s in STEPS for k in ("cpu", "wall")}
    window: list[str] = []

    async def timed(step: str, keep: bool, call: Awaitable[T]) -> T:
        cpu, wall = time.process_time(), time.perf_counter()
        result = await call
        if keep:
            out[f"{step}_cpu"].append((time.process_time() - cpu) * 1000)
            out[f"{step}_wall"].append((time.perf_counter() - wall) * 1000)
        return result

    for i in range(warmup + messages):
        keep = i >= warmup
        event = make_event(f"message {i}")
        person = await timed(
            "resolve_speaker",
            keep,
            run["StoreActivities.resolve_speaker"](
                ResolveSpeakerInput(
                    agent=handle, channel=CHANNEL, speaker=event.speaker, seen_at=now()
                )
            ),
        )
        turn = DialogTurn(
            turn_id=event.event_id,
            conversation_id=conversation,
            role=Role.PERSON,
            speaker_id=person.person_id,
            speaker_name=person.person_name,
            text=event.text,
            at=now(),
        )
        await timed(
            "record_turn",
            keep,
            run["StoreActivities.record_turn"](
                RecordTurnInput(agent=handle, channel=CHANNEL, turn=turn)
            ),
        )
        window = [*window, turn.turn_id][-40:]
        await timed(
            "assemble",
            keep,
            run["ContextActivities.assemble"](
                AssembleContextInput(
                    activation_id=new_ulid(),
                    agent=handle,
                    conversation_id=conversation,
                    channel=CHANNEL,
                    event=event,
                    person_id=person.person_id,
                    participants=[person.person_id],
                    window_turn_ids=window,
                    now=now(),
                )
            ),
        )
    await deps.aclose()
    return out


def _variant(spec: str) -> tuple[str, Path]:
    name, _, tree = spec.partition("=")
    if not name or not tree:
        raise SystemExit(f"--variant {spec!r}: write it as name=path/to/tree")
    path = Path(tree).resolve()
    if not (path / "workers" / "build.py").is_file():
        raise SystemExit(f"--variant {spec!r}: {path} is not a Persyn source tree")
    return name, path


_CHILD = (
    "import runpy, sys; sys.argv = ['premodel', '--child', *map(str, {args!r})]; "
    "runpy.run_path({file!r}, run_name='__main__')"
)


def _run_child(tree: Path, dsn: str, messages: int, warmup: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PERSYN_LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        # Run by path, not as a module: the variant's tree need not have this file, and a
        # script's own directory on sys.path would shadow packages with bench's module names.
        [sys.executable, "-c", _CHILD.format(file=__file__, args=[dsn, messages, warmup])],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"variant in {tree} failed:\n{done.stderr[-3000:]}")
    result: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Parse the variants, start PostgreSQL, run the blocks and record the table."""
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        dsn, messages, warmup = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        print(json.dumps(asyncio.run(_child(dsn, messages, warmup))))
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", action="append", required=True, help="name=tree")
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args()
    variants = [_variant(v) for v in args.variant]

    from bench.harness import percentile, record
    from store.embedded import EmbeddedPostgres
    from store.migrate import upgrade
    from temporal.devserver import free_port

    blocks: dict[str, list[dict[str, list[float]]]] = {name: [] for name, _ in variants}
    with tempfile.TemporaryDirectory(prefix="persyn-bench-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)
        pg = EmbeddedPostgres(home / "pg", free_port(), home / "logs" / "pg.log")
        pg.start()
        try:
            upgrade(pg.dsn)
            for _ in range(args.blocks):
                for name, tree in variants:
                    blocks[name].append(_run_child(tree, pg.dsn, args.messages, args.warmup))
        finally:
            pg.stop()

    def med(name: str, key: str) -> tuple[float, list[float]]:
        per_block = [statistics.median(b[key]) for b in blocks[name]]
        return statistics.median(per_block), per_block

    names = [name for name, _ in variants]
    rows = []
    for step in (*STEPS, "total"):
        cells = []
        for name in names:
            if step == "total":
                per_block = [
                    sum(statistics.median(b[f"{s}_cpu"]) for s in STEPS) for b in blocks[name]
                ]
                cpu = statistics.median(per_block)
                walls = [
                    sum(b[f"{s}_wall"][i] for s in STEPS)
                    for b in blocks[name]
                    for i in range(len(b["assemble_wall"]))
                ]
            else:
                cpu, per_block = med(name, f"{step}_cpu")
                walls = [w for b in blocks[name] for w in b[f"{step}_wall"]]
            spread = ", ".join(f"{v:.2f}" for v in per_block)
            cells.append(
                f"CPU {cpu:.2f} ms ({spread}); wall p50 {percentile(walls, 0.5):.2f}, "
                f"p95 {percentile(walls, 0.95):.2f} ms"
            )
        rows.append(f"| {step} | " + " | ".join(cells) + " |")
    load = os.getloadavg()[0]
    body = (
        f"`python -m bench.premodel_activities` with {', '.join(names)}: the pre-model path's "
        f"three local activities awaited in order, {args.messages} messages after "
        f"{args.warmup} warm-up per block, {args.blocks} blocks per variant, alternating, one "
        "embedded PostgreSQL; CPU is the child process's time per call (median of each "
        "block, blocks in brackets), wall pools every block. Load average (1 min) at the end: "
        f"{load:.1f} on 2 cores.\n\n"
        f"| step | {' | '.join(names)} |\n|---|{'---|' * len(names)}\n" + "\n".join(rows)
    )
    if args.no_record:
        print(body)
    else:
        record("The pre-model path's local activities, as plain awaits", body)


if __name__ == "__main__":
    main()
