"""Memory of the in-process encoder over a worker's life, with and without onnxruntime's arena.

    python -m bench.encoder_memory [--batches 150] [--record]

Each setting runs in a fresh process: load the encoder, encode chat-length sentences (what a
search or an index pays), then ``--batches`` batches of mixed shapes (1 to 64 texts of 5 to
220 words, what consolidation and vector backfill send; one batch in four dense in IDs, which
take a word piece for every two characters or so), printing resident memory as it goes. A
worker's memory must stay flat, so the figures that matter are RSS after the mixed batches
against RSS after load, and the peak (the kernel's high-water mark) while they ran.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil

from activities.memory.encoders.local import LocalEncoder
from bench.encoder_throughput import WORDS, sentences
from bench.harness import record
from schemas.ids import new_ulid

SHAPES = (1, 1, 2, 4, 8, 32, 32, 64)
"""Batch sizes drawn for the mixed phase: mostly small, now and then a backfill's full batch."""


def _mib() -> float:
    return psutil.Process().memory_info().rss / 2**20


def _peak_mib() -> float:
    """The process's resident high-water mark (Linux), else its RSS now."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return _mib()


def _batch(rng: random.Random, size: int) -> list[str]:
    """``size`` texts of words, or (one batch in four) of IDs."""
    if rng.random() < 0.25:
        return [" ".join(new_ulid() for _ in range(rng.randint(1, 12))) for _ in range(size)]
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 220))) for _ in range(size)]


async def _child(arena: bool, batches: int) -> dict[str, object]:
    encoder = LocalEncoder(arena=arena)
    await encoder.encode(["warm up"])
    loaded = _mib()
    texts = sentences(1024)
    started = time.perf_counter()
    await encoder.encode(texts)
    chat_rate = len(texts) / (time.perf_counter() - started)
    singles = []
    for text in texts[:100]:
        started = time.perf_counter()
        await encoder.encode([text])
        singles.append((time.perf_counter() - started) * 1000)
    rng = random.Random(3)
    rss = [_mib()]
    before_mixed = _peak_mib()
    encoded, started = 0, time.perf_counter()
    for n in range(batches):
        size = rng.choice(SHAPES)
        await encoder.encode(_batch(rng, size))
        encoded += size
        if (n + 1) % max(1, batches // 3) == 0:
            rss.append(_mib())
    mixed_rate = encoded / (time.perf_counter() - started)
    await encoder.aclose()
    return {
        "loaded": loaded,
        "chat_rate": chat_rate,
        "single_p50": statistics.median(singles),
        "rss": rss,
        "mixed_rate": mixed_rate,
        "peak": max(before_mixed, _peak_mib()),
        "end": _mib(),
    }


def _run(arena: bool, batches: int) -> dict[str, object]:
    command = [sys.executable, "-m", "bench.encoder_memory", "--child", str(int(arena))]
    command += ["--batches", str(batches)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=150, help="Mixed-shape batches.")
    parser.add_argument("--record", action="store_true", help="Append to bench/RESULTS.md.")
    parser.add_argument("--child", type=int, choices=(0, 1), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(asyncio.run(_child(bool(args.child), args.batches))))
        return
    lines = [
        f"{args.batches} mixed batches (1-64 texts of 5-220 words, one batch in four of IDs) "
        "after 1,024 chat-length sentences, each setting in a fresh process.",
        "",
        "| onnxruntime arena | RSS loaded | RSS through the mixed batches | peak RSS "
        "| chat sentences/s | one query p50 | mixed texts/s |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for arena in (True, False):
        r = _run(arena, args.batches)
        trail = " -> ".join(f"{v:.0f}" for v in r["rss"])  # type: ignore[attr-defined]
        lines.append(
            f"| {'on' if arena else 'off (default)'} | {r['loaded']:.0f} MiB | {trail} MiB "
            f"| {r['peak']:.0f} MiB | {r['chat_rate']:.0f} | {r['single_p50']:.1f} ms "
            f"| {r['mixed_rate']:.1f} |"
        )
    text = "\n".join(lines)
    if args.record:
        record("Encoder memory with and without onnxruntime's arena", text)
    else:
        print(text)


if __name__ == "__main__":
    main()
