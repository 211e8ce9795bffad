"""Throughput and CPU of the in-process encoder (all-MiniLM-L6-v2 on onnxruntime).

    python bench/encoder_throughput.py [--sentences 1024] [--threads N ...] [--no-record]

For each thread count (default 1 and 2), reports load time, sentences per second and CPU per
sentence over a batch of chat-length sentences, single-query latency and CPU (what a search pays
to encode its question) and resident memory; appends to RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from activities.memory.encoders.local import LocalEncoder
from bench.harness import machine

_VOCABULARY = """
I we went saw the a park dog cat bread marathon sister painting camping lake sunrise yesterday
last week adopted support group counseling career music guitar school friends family trip photo
really awesome thanks hope you are doing well proud of happy excited tomorrow plans weekend
hiking beach mountain book reading movie dinner cooking garden
"""
WORDS = _VOCABULARY.split()


def sentences(count: int, seed: int = 7) -> list[str]:
    """Chat-length sentences (6 to 40 words), the same every run."""
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 40))).capitalize() + "."
        for _ in range(count)
    ]


async def _timed(encoder: LocalEncoder, texts: list[str]) -> tuple[float, float]:
    """Wall and process CPU seconds of encoding ``texts`` in one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    await encoder.encode(texts)
    return time.perf_counter() - wall, time.process_time() - cpu


async def measure(count: int, threads: int | None) -> str:
    """One table row: load, batch rate and CPU, one query's time and CPU, resident memory."""
    process = psutil.Process()
    rss_before = process.memory_info().rss
    encoder = LocalEncoder(threads=threads)
    load, _ = await _timed(encoder, ["warm up"])
    rss_loaded = process.memory_info().rss
    texts = sentences(count)
    batch, batch_cpu = await _timed(encoder, texts)
    singles = [await _timed(encoder, [text]) for text in texts[:100]]
    walls = sorted(wall * 1000 for wall, _ in singles)
    rss_after = process.memory_info().rss
    await encoder.aclose()
    mib = 2**20
    return (
        f"| {threads or 'default'} | {load:.2f} s | {count / batch:.0f} sentences/s | "
        f"{batch_cpu / count * 1000:.1f} ms | "
        f"{statistics.median(walls):.1f} / {walls[94]:.1f} ms | "
        f"{statistics.median(cpu * 1000 for _, cpu in singles):.1f} ms | "
        f"{rss_loaded / mib:.0f} / {rss_after / mib:.0f} MiB (before: {rss_before / mib:.0f}) |"
    )


async def report(count: int, threads: list[int | None]) -> str:
    """The table, a row per thread count, each measured in this process in turn."""
    rows = [await measure(count, each) for each in threads]
    return "\n".join(
        [
            f"### Encoder throughput, {datetime.now(UTC):%Y-%m-%d} ({machine()})",
            "",
            f"all-MiniLM-L6-v2 on onnxruntime, {count} sentences of 6-40 words, "
            f"Python {platform.python_version()}, load average at start "
            f"{os.getloadavg()[0]:.2f}; CPU is the process's time (every thread):",
            "",
            "| onnxruntime threads | load | batch throughput | batch CPU per sentence "
            "| one query p50 / p95 | one query CPU p50 | RSS loaded / after |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1024)
    parser.add_argument(
        "--threads",
        type=int,
        action="append",
        help="onnxruntime's threads for one inference; repeat for a row each (default: 1, 2)",
    )
    parser.add_argument("--no-record", action="store_true")
    arguments = parser.parse_args()
    text = asyncio.run(report(arguments.sentences, arguments.threads or [1, 2]))
    print(text)
    if not arguments.no_record:
        with (Path(__file__).resolve().parent / "RESULTS.md").open("a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")
