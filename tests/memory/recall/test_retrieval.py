"""Retrieval as a context source: ranking, bands, the budget, and ranking by words alone."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from activities.context.assembler import ContextAssembler
from activities.context.model import ContextSource
from activities.context.sources import ClockSource, ConstraintsSource, DialogSource, PersonaSource
from activities.gateway.registry import ModelRegistry
from activities.memory.encoder import Encoder
from activities.memory.encoders.local import LocalEncoder
from activities.memory.encoders.null import NullEncoder
from activities.memory.encoders.service import ServiceEncoder
from activities.memory.recall import MemoryRecall
from schemas.activation import AssembleContextInput
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.memory import MemorySettings, ScoreBand
from schemas.models import ModelBinding, ProviderName, TaskType
from schemas.recall import RecallMode, SurfacedMemories
from schemas.text import estimate_tokens
from store.db import Database
from store.queries.runtime import load_prompt
from store.tables import PromptRow
from temporal.devserver import free_port
from tests.harness import event
from tests.memory.recall.records import NOW, add_channel, add_memory, new_agent

CHANNEL = ChannelRef(service="terminal", channel="kitchen")
ADA, BOB = new_ulid(), new_ulid()
TOMATOES = "I promised Ada I would water her tomato plants while she is in Lisbon next week."
OTHERS = [
    "Ada and I argued about whether Rust or Go is better for command-line tools.",
    "I explained to Ada how a sourdough starter needs feeding every day.",
    "Ada told me her cat had to stay overnight at the vet after eating a ribbon.",
]
QUESTION = "Can you remind me what you promised to do for my tomato plants?"


@dataclass
class Kitchen:
    agent: str
    tomatoes: str
    others: list[str]


@pytest.fixture(scope="module")
async def kitchen(db: Database, encoder: LocalEncoder) -> Kitchen:
    agent = await new_agent(db)
    channel_id = await add_channel(db, agent, CHANNEL)
    vectors = await encoder.encode([TOMATOES, *OTHERS])
    common: dict[str, Any] = {"agent": agent, "channel_id": channel_id, "embed_model": encoder.name}
    tomatoes = await add_memory(
        db,
        **common,
        summary=TOMATOES,
        vector=vectors[0],
        participants=[ADA],
        emotion="engaged",
        created_at=NOW - timedelta(days=3),
    )
    others = [
        await add_memory(
            db,
            **common,
            summary=summary,
            vector=vector,
            participants=[ADA],
            emotion="curious",
            created_at=NOW - timedelta(days=10 + i),
        )
        for i, (summary, vector) in enumerate(zip(OTHERS, vectors[1:], strict=True))
    ]
    return Kitchen(agent=agent, tomatoes=tomatoes, others=others)


async def recall_with(
    db: Database, encoder: Encoder, agent: str, query: str = QUESTION
) -> SurfacedMemories:
    surfaced = await MemoryRecall(db, encoder, MemorySettings()).recall(
        agent=agent,
        channel_key=CHANNEL.key,
        present=[ADA],
        query=query,
        now=NOW,
        context_window=8192,
    )
    assert surfaced is not None
    return surfaced


async def test_the_relevant_memory_ranks_first_and_strong(
    db: Database, encoder: LocalEncoder, kitchen: Kitchen
) -> None:
    surfaced = await recall_with(db, encoder, kitchen.agent)

    assert surfaced.mode is RecallMode.SEMANTIC
    ids = [memory.id for memory in surfaced.records]
    assert ids[0] == kitchen.tomatoes
    assert sorted(ids[1:]) == sorted(kitchen.others)
    best, rest = surfaced.records[0], surfaced.records[1:]
    assert best.band is ScoreBand.STRONG
    assert all(memory.band is ScoreBand.WEAK for memory in rest)
    assert [m.score for m in surfaced.records] == sorted(
        (m.score for m in surfaced.records), reverse=True
    )
    assert best.signals.semantic is not None and best.signals.lexical > 0


async def test_an_unrelated_question_surfaces_nothing_strong(
    db: Database, encoder: LocalEncoder, kitchen: Kitchen
) -> None:
    surfaced = await recall_with(db, encoder, kitchen.agent, "What is the capital of Mongolia?")
    assert all(memory.band is ScoreBand.WEAK for memory in surfaced.records)


@pytest.mark.parametrize("encoder_kind", ["none", "service-down"])
async def test_without_an_encoder_the_same_records_rank_by_their_words(
    db: Database, kitchen: Kitchen, encoder_kind: str
) -> None:
    encoder: Encoder = (
        NullEncoder()
        if encoder_kind == "none"
        else ServiceEncoder(
            base_url=f"http://127.0.0.1:{free_port()}/v1", model="encoder", dimensions=384
        )
    )
    try:
        surfaced = await recall_with(db, encoder, kitchen.agent)
    finally:
        await encoder.aclose()

    assert surfaced.mode is RecallMode.LEXICAL
    assert surfaced.records[0].id == kitchen.tomatoes
    assert surfaced.records[0].signals.semantic is None
    assert {m.id for m in surfaced.records} == {kitchen.tomatoes, *kitchen.others}


async def test_records_of_another_encoder_are_ranked_by_words_not_compared_as_vectors(
    db: Database, encoder: LocalEncoder
) -> None:
    agent = await new_agent(db)
    channel_id = await add_channel(db, agent, CHANNEL)
    record = await add_memory(
        db,
        agent=agent,
        channel_id=channel_id,
        summary=TOMATOES,
        vector=[1.0] + [0.0] * 383,
        embed_model="some-other-model",
        participants=[ADA],
    )
    surfaced = await recall_with(db, encoder, agent)
    assert surfaced.mode is RecallMode.LEXICAL
    assert [m.id for m in surfaced.records] == [record]


async def test_the_prompt_shows_id_band_date_and_feeling_and_stores_what_it_showed(
    db: Database, encoder: LocalEncoder, kitchen: Kitchen
) -> None:
    binding = ModelBinding(provider=ProviderName.SCRIPTED, model="scripted", context_window=8192)
    prompt = await assemble(db, encoder, kitchen.agent, binding, MemorySettings())

    lines = memory_lines(prompt.system)
    assert lines[0] == f"[{kitchen.tomatoes} | strong | 2026-11-27 | engaged] {TOMATOES}"
    assert (
        "How you felt in these memories, oldest to newest: curious -> curious -> curious -> "
        "engaged." in prompt.system
    )
    stored = SurfacedMemories.model_validate(prompt.extra["memory"])
    assert [m.id for m in stored.records] == [line_id(line) for line in lines]
    assert stored.records[0].band is ScoreBand.STRONG and stored.records[0].summary == TOMATOES
    # Volatile context follows the stable prefix: persona, constraints, clock, then memories.
    assert prompt.system.index("Standing constraints") < prompt.system.index(lines[0])


async def test_memories_fill_at_most_the_configured_fraction_of_a_small_window(
    db: Database, encoder: LocalEncoder
) -> None:
    agent = await new_agent(db)
    channel_id = await add_channel(db, agent, CHANNEL)
    summaries = [
        f"Memory {i}: I talked with Ada about tomato plants, watering schedules and the "
        f"balcony garden, and I noted detail number {i} about it."
        for i in range(120)
    ]
    vectors = await encoder.encode(summaries)
    for i, (summary, vector) in enumerate(zip(summaries, vectors, strict=True)):
        await add_memory(
            db,
            agent=agent,
            channel_id=channel_id,
            summary=summary,
            vector=vector,
            embed_model=encoder.name,
            participants=[ADA],
            created_at=NOW - timedelta(hours=i),
        )
    window, fraction = 3000, 0.3
    settings = MemorySettings(retrieval_fraction=fraction)
    binding = ModelBinding(
        provider=ProviderName.SCRIPTED,
        model="scripted",
        context_window=window,
        max_output_tokens=200,
    )
    prompt = await assemble(db, encoder, agent, binding, settings)

    lines = memory_lines(prompt.system)
    block = prompt.system[prompt.system.index("Your memories") :]
    assert 0 < len(lines) < len(summaries)
    assert estimate_tokens(block) <= fraction * window
    # What did not fit is what ranked lowest: the kept lines are the best-first prefix.
    stored = SurfacedMemories.model_validate(prompt.extra["memory"])
    assert [m.id for m in stored.records] == [line_id(line) for line in lines]
    assert stored.candidates > len(lines)
    scores = [m.score for m in stored.records]
    assert scores == sorted(scores, reverse=True)
    assert prompt.token_estimate <= window


async def assemble(
    db: Database, encoder: Encoder, agent: str, binding: ModelBinding, settings: MemorySettings
) -> PromptRow:
    sources: list[ContextSource] = [
        PersonaSource(),
        ConstraintsSource(),
        ClockSource(),
        DialogSource(db),
        MemoryRecall(db, encoder, settings),
    ]
    registry = ModelRegistry(bindings={TaskType.RESPOND: binding})
    assembler = ContextAssembler(db, registry, sources)
    ev = event(QUESTION, channel=CHANNEL)
    ref = await assembler.assemble(
        AssembleContextInput(
            activation_id=new_ulid(),
            agent=agent,
            conversation_id=new_ulid(),
            channel=CHANNEL,
            event=ev,
            person_id=ADA,
            participants=[ADA],
            now=NOW,
        )
    )
    async with db.session() as session:
        prompt = await load_prompt(session, prompt_id=ref.prompt_id)
    assert prompt is not None
    return prompt


_LINE = re.compile(r"^\[([0-9A-HJKMNP-TV-Z]{26}) \| (strong|moderate|weak) \| ", re.MULTILINE)


def memory_lines(system: str) -> list[str]:
    return [line for line in system.splitlines() if _LINE.match(line)]


def line_id(line: str) -> str:
    match = _LINE.match(line)
    assert match is not None
    return match.group(1)
