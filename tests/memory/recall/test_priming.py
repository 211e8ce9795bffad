"""Recall primed by admission: the ground read and the input's embedding start before the turn
is written, are used once by the recall of the same input, and change nothing it returns."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import activities.memory.recall as recall_module
from activities.memory.encoders.local import LocalEncoder
from activities.memory.recall import MemoryRecall
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.memory import MemorySettings
from schemas.recall import SurfacedMemories
from store.db import Database
from store.queries.recall import (
    Fence,
    recall_ground,
    semantic_candidates,
    semantic_candidates_on,
)
from store.sql import execute
from tests.memory.recall.records import NOW, add_channel, add_memory, new_agent

ADA = new_ulid()
QUESTION = "What did I ask you to do with the tomato plants?"
REMEMBERED = "Ada asked me to water her tomato plants while she is away."


class CountingEncoder:
    """The local encoder, counting the texts it is asked to embed."""

    def __init__(self, inner: LocalEncoder) -> None:
        self._inner = inner
        self.name = inner.name
        self.texts: list[str] = []

    async def encode(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return await self._inner.encode(texts)


async def _kept(db: Database, encoder: LocalEncoder, channel: ChannelRef) -> str:
    agent = await new_agent(db)
    channel_id = await add_channel(db, agent, channel)
    [vector] = await encoder.encode([REMEMBERED])
    await add_memory(
        db,
        agent=agent,
        channel_id=channel_id,
        summary=REMEMBERED,
        vector=vector,
        embed_model=encoder.name,
        participants=[ADA],
        created_at=NOW,
    )
    return agent


async def _recall(recall: MemoryRecall, agent: str, channel: ChannelRef) -> SurfacedMemories | None:
    return await recall.recall(
        agent=agent,
        channel_key=channel.key,
        present=[ADA],
        query=QUESTION,
        now=NOW,
        context_window=8192,
    )


async def test_a_primed_recall_embeds_once_and_finds_what_an_unprimed_one_finds(
    db: Database, encoder: LocalEncoder
) -> None:
    channel = ChannelRef(service="terminal", channel="primed")
    agent = await _kept(db, encoder, channel)
    counting = CountingEncoder(encoder)
    recall = MemoryRecall(db, counting, MemorySettings())  # type: ignore[arg-type]
    plain = await _recall(recall, agent, channel)
    assert counting.texts == [QUESTION]
    recall.prime(agent=agent, channel_key=channel.key, query=QUESTION)
    primed = await _recall(recall, agent, channel)
    assert counting.texts == [QUESTION, QUESTION]  # the primed embedding was used, not redone
    assert plain is not None and primed is not None
    assert [r.id for r in primed.records] == [r.id for r in plain.records]
    assert primed.records[0].summary == REMEMBERED
    assert primed.mode is plain.mode


async def test_an_agent_with_nothing_kept_never_embeds_even_when_primed(
    db: Database, encoder: LocalEncoder
) -> None:
    channel = ChannelRef(service="terminal", channel="empty")
    agent = await new_agent(db)
    await add_channel(db, agent, channel)
    counting = CountingEncoder(encoder)
    recall = MemoryRecall(db, counting, MemorySettings())  # type: ignore[arg-type]
    recall.prime(agent=agent, channel_key=channel.key, query=QUESTION)
    assert await _recall(recall, agent, channel) is None
    assert counting.texts == []


async def test_where_something_was_kept_the_question_is_embedded_beside_the_ground_read(
    db: Database, encoder: LocalEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    channel = ChannelRef(service="terminal", channel="beside")
    agent = await _kept(db, encoder, channel)
    counting = CountingEncoder(encoder)
    recall = MemoryRecall(db, counting, MemorySettings())  # type: ignore[arg-type]
    embedded_when_read: list[int] = []

    async def watched(lane: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0)  # the read's first wait: a task started beside it runs now
        embedded_when_read.append(len(counting.texts))
        return await recall_ground(lane, **kwargs)

    monkeypatch.setattr(recall_module, "recall_ground", watched)
    first = await _recall(recall, agent, channel)  # learns that this channel keeps records
    second = await _recall(recall, agent, channel)

    assert embedded_when_read == [0, 2]  # the first read went alone; the second had company
    assert counting.texts == [QUESTION, QUESTION]
    assert first is not None and second is not None
    assert [r.id for r in second.records] == [r.id for r in first.records]


async def test_an_early_embedding_is_dropped_once_everything_was_forgotten(
    db: Database, encoder: LocalEncoder
) -> None:
    channel = ChannelRef(service="terminal", channel="forgotten")
    agent = await _kept(db, encoder, channel)
    recall = MemoryRecall(db, encoder, MemorySettings())
    assert await _recall(recall, agent, channel) is not None
    async with db.session() as session:
        await execute(
            session, "UPDATE memory_records SET forgotten_at = now() WHERE agent = :a", {"a": agent}
        )
        await session.commit()
    assert await _recall(recall, agent, channel) is None


async def test_the_lane_finds_the_nearest_records_the_session_finds(
    db: Database, encoder: LocalEncoder
) -> None:
    channel = ChannelRef(service="terminal", channel="nearest")
    agent = await _kept(db, encoder, channel)
    ground = await recall_ground(db.lane, agent=agent, channel_key=channel.key, query="")
    fence = Fence(agent=agent, channel_ids=ground.channel_ids, present=[ADA])
    [vector] = await encoder.encode([QUESTION])
    asked: dict[str, Any] = {"vector": vector, "model": encoder.name, "limit": 5, "ef_search": 40}
    async with db.session() as session:
        by_session = await semantic_candidates(session, fence, **asked)
    by_lane = await semantic_candidates_on(db.lane, fence, **asked)

    assert by_lane == by_session and [c.summary for c in by_lane] == [REMEMBERED]


async def test_records_no_one_present_may_see_surface_nothing(
    db: Database, encoder: LocalEncoder
) -> None:
    channel = ChannelRef(service="terminal", channel="private")
    agent = await _kept(db, encoder, channel)
    recall = MemoryRecall(db, encoder, MemorySettings())
    recall.prime(agent=agent, channel_key=channel.key, query=QUESTION)
    surfaced = await recall.recall(
        agent=agent,
        channel_key=channel.key,
        present=[new_ulid()],  # not Ada: her private record stays hidden
        query=QUESTION,
        now=NOW,
        context_window=8192,
    )
    assert surfaced is None


async def test_a_failed_early_read_is_read_again_at_recall(
    db: Database, encoder: LocalEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    channel = ChannelRef(service="terminal", channel="retry")
    agent = await _kept(db, encoder, channel)
    calls: list[str] = []

    async def flaky(lane: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["query"])
        if len(calls) == 1:
            raise ConnectionError("the database went away")
        return await recall_ground(lane, **kwargs)

    monkeypatch.setattr(recall_module, "recall_ground", flaky)
    recall = MemoryRecall(db, encoder, MemorySettings())
    recall.prime(agent=agent, channel_key=channel.key, query=QUESTION)
    surfaced = await _recall(recall, agent, channel)
    assert calls == [QUESTION, QUESTION]
    assert surfaced is not None and surfaced.records[0].summary == REMEMBERED


async def test_the_ground_reads_the_memory_group_and_forgotten_records(db: Database) -> None:
    agent = await new_agent(db)
    here = ChannelRef(service="terminal", channel="here")
    there = ChannelRef(service="terminal", channel="there")
    elsewhere = ChannelRef(service="terminal", channel="elsewhere")
    here_id = await add_channel(db, agent, here, group="home")
    there_id = await add_channel(db, agent, there, group="home")
    await add_channel(db, agent, elsewhere)
    ground = await recall_ground(
        db.lane, agent=agent, channel_key=here.key, query="The plants were watered"
    )
    unknown = await recall_ground(db.lane, agent=agent, channel_key="terminal:none", query="")
    assert ground.channel_ids == sorted([here_id, there_id])
    assert set(ground.lexemes) == {"plant", "water"}
    assert not ground.anything
    assert unknown.channel_ids == [] and not unknown.anything
    await add_memory(db, agent=agent, channel_id=there_id, summary="x", forgotten_at=NOW)
    forgotten = await recall_ground(db.lane, agent=agent, channel_key=here.key, query="x")
    assert not forgotten.anything
    await add_memory(db, agent=agent, channel_id=there_id, summary="y")
    kept = await recall_ground(db.lane, agent=agent, channel_key=here.key, query="y")
    assert kept.anything
