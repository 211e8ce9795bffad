"""Recall inside real turns: the worker's pipeline on Temporal and PostgreSQL, a scripted model."""

from __future__ import annotations

from temporalio.client import Client

from activities.memory.encoders.local import LocalEncoder
from schemas.events import Outcome
from schemas.memory import MemorySettings, ScoreBand
from schemas.models import TaskType
from schemas.recall import RecallMode
from schemas.text import estimate_tokens
from temporal.devserver import free_port
from tests.harness import Harness, Stack, running_worker, terminal
from tests.memory.recall.turns import (
    QUESTION,
    SUMMARY,
    memory_block,
    remember_tomatoes,
    respond_prompt,
    surfaced,
)


async def test_a_turn_recalls_the_memory_with_its_id_and_band(
    harness: Harness, encoder: LocalEncoder
) -> None:
    agent = (await harness.create_agent()).handle
    await harness.say(agent, "Hello again!")
    record = await remember_tomatoes(harness.db, encoder, agent=agent, channel=terminal())

    receipt = await harness.say(agent, QUESTION)

    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    prompt = await respond_prompt(harness.db, receipt)
    assert f"[{record} | strong | " in prompt.system and SUMMARY in prompt.system
    shown = surfaced(prompt)
    assert shown.mode is RecallMode.SEMANTIC
    assert [(m.id, m.band) for m in shown.records] == [(record, ScoreBand.STRONG)]


async def test_another_channel_and_another_person_see_nothing(
    harness: Harness, encoder: LocalEncoder
) -> None:
    agent = (await harness.create_agent()).handle
    await harness.say(agent, "Hello again!")
    await remember_tomatoes(harness.db, encoder, agent=agent, channel=terminal())

    elsewhere = await harness.say(agent, QUESTION, channel=terminal("other-room"))
    stranger = await harness.say(agent, QUESTION, speaker="mallory")

    for receipt in (elsewhere, stranger):
        prompt = await respond_prompt(harness.db, receipt)
        assert SUMMARY not in prompt.system and "memory" not in prompt.extra


async def test_with_the_encoder_down_the_turn_completes_with_lexical_recall(
    client: Client, stack: Stack, encoder: LocalEncoder
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    overrides: dict[str, object] = {"encoder": "openai-compatible", "encoder_base_url": dead}
    async with running_worker(client, stack, settings_overrides=overrides) as down:
        agent = (await down.create_agent()).handle
        await down.say(agent, "Hello again!")
        record = await remember_tomatoes(down.db, encoder, agent=agent, channel=terminal())

        receipt = await down.say(agent, QUESTION)

        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        assert not receipt.marker.degraded
        shown = surfaced(await respond_prompt(down.db, receipt))
        assert shown.mode is RecallMode.LEXICAL
        assert shown.records[0].id == record


async def test_a_small_window_gets_at_most_its_share_of_memories(
    client: Client, stack: Stack, encoder: LocalEncoder
) -> None:
    window, fraction = 2500, 0.25
    overrides: dict[str, object] = {
        "models": {
            TaskType.RESPOND: {
                "provider": "scripted",
                "model": "scripted",
                "context_window": window,
                "max_output_tokens": 200,
            }
        },
        "memory": MemorySettings(retrieval_fraction=fraction),
    }
    async with running_worker(client, stack, settings_overrides=overrides) as small:
        agent = (await small.create_agent()).handle
        await small.say(agent, "Hello again!")
        for _ in range(60):
            await remember_tomatoes(small.db, encoder, agent=agent, channel=terminal())

        receipt = await small.say(agent, QUESTION)

        prompt = await respond_prompt(small.db, receipt)
        shown = surfaced(prompt)
        block = memory_block(prompt.system)
        assert 0 < len(shown.records) < shown.candidates
        assert block.count(SUMMARY) == len(shown.records)
        assert estimate_tokens(block) <= fraction * window
