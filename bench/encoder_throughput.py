"""Throughput of the in-process encoder (all-MiniLM-L6-v2 int8 on onnxruntime).

    python bench/encoder_throughput.py [--sentences 1024] [--threads N] [--no-record]

Reports load time, sentences per second over a batch of chat-length sentences, single-query
latency (what a search pays to encode its question) and resident memory; appends to RESULTS.md.
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


async def measure(count: int, threads: int | None) -> str:
    process = psutil.Process()
    rss_before = process.memory_info().rss
    encoder = LocalEncoder(threads=threads)
    started = time.perf_counter()
    await encoder.encode(["warm up"])
    load = time.perf_counter() - started
    rss_loaded = process.memory_info().rss
    texts = sentences(count)
    started = time.perf_counter()
    await encoder.encode(texts)
    batch = time.perf_counter() - started
    singles = []
    for text in texts[:100]:
        started = time.perf_counter()
        await encoder.encode([text])
        singles.append((time.perf_counter() - started) * 1000)
    rss_after = process.memory_info().rss
    await encoder.aclose()
    mib = 2**20
    return "\n".join(
        [
            f"### Encoder throughput, {datetime.now(UTC):%Y-%m-%d} ({machine()})",
            "",
            f"all-MiniLM-L6-v2 int8, onnxruntime threads {threads or 'default'}, "
            f"{count} sentences of 6-40 words, Python {platform.python_version()}, "
            f"load average at start {os.getloadavg()[0]:.2f}:",
            "",
            "| load | batch throughput | one query p50 / p95 | RSS loaded / after |",
            "|---:|---:|---:|---:|",
            f"| {load:.2f} s | {count / batch:.0f} sentences/s | "
            f"{statistics.median(singles):.1f} / {sorted(singles)[94]:.1f} ms | "
            f"{rss_loaded / mib:.0f} / {rss_after / mib:.0f} MiB (process before: "
            f"{rss_before / mib:.0f} MiB) |",
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--no-record", action="store_true")
    arguments = parser.parse_args()
    report = asyncio.run(measure(arguments.sentences, arguments.threads))
    print(report)
    if not arguments.no_record:
        with (Path(__file__).resolve().parent / "RESULTS.md").open("a", encoding="utf-8") as f:
            f.write("\n" + report + "\n")
