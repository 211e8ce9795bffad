"""Conversations become first-person memories: every field, chunks, the as-of rule, no encoder."""

from __future__ import annotations

from temporalio.client import Client

from activities.memory.encoders.local import LocalEncoder
from schemas.memory import MemorySettings, Sensitivity
from schemas.memory_formation import MaintenanceInput
from temporal.devserver import free_port
from tests.harness import Stack
from tests.memory.formation.helpers import (
    DEFAULT_SUMMARY,
    SUMMARY_SYSTEM,
    close_and_consolidate,
    formation_requests,
    formation_rules,
    formation_worker,
    new_agent,
    records_of,
    row,
    rows,
    whole_prompt,
)
from workflows.maintenance import MaintenanceWorkflow

WORDS = ["kestrel", "heron", "osprey", "plover", "merlin", "harrier", "falcon"]
"""One word per exchange, said nowhere else, so a prompt shows which turns it holds."""


def long_message(word: str) -> str:
    # About 60 tokens, so a 200-token chunk closes every one or two exchanges.
    return f"Today I want to tell you about the {word}. " + "It was a long and windy day. " * 7


async def test_a_closed_conversation_becomes_a_memory_with_every_field(
    client: Client, stack: Stack, encoder: LocalEncoder
) -> None:
    async with formation_worker(client, stack, rules=formation_rules(), encoder=encoder) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.1)
        first = await harness.say(agent, "I just got back from Lisbon, it was wonderful.")
        second = await harness.say(agent, "Let's plan the next trip on Friday.")
        assert first.marker and second.marker
        conversation = first.marker.conversation_id
        assert conversation and second.marker.conversation_id == conversation

        (result,) = await close_and_consolidate(harness.client, conversation)
        assert len(result.formed) == 1 and not result.failed

        (record,) = await records_of(harness.db, agent)
        turns = await rows(
            harness.db,
            "SELECT id, person_id, channel_id FROM dialog_turns WHERE conversation_id = :c "
            "ORDER BY at, id",
            c=conversation,
        )
        assert len(turns) == 4  # two inputs, two replies
        assert record.id == result.formed[0]
        assert (record.turn_first, record.turn_last) == (turns[0].id, turns[-1].id)
        assert record.conversation_id == conversation
        assert record.channel_id == turns[0].channel_id
        assert record.participants == [turns[0].person_id]
        assert record.summary == DEFAULT_SUMMARY
        assert record.importance == 7
        assert record.emotion == "curious"
        assert record.sensitivity is Sensitivity.PRIVATE
        assert record.tags == ["travel", "lisbon"]
        assert record.forgotten_at is None
        extra = await row(
            harness.db,
            "SELECT embedding IS NOT NULL AS embedded, embed_model, derived_from, "
            "turn_first_at, turn_last_at, rubric, emotions FROM memory_records WHERE id = :id",
            id=record.id,
        )
        assert extra.embedded and extra.embed_model == encoder.name
        assert extra.derived_from == []  # the agent's first memory
        assert extra.turn_first_at < extra.turn_last_at
        assert extra.rubric["importance"] == 7 and extra.rubric["novelty"] == 6
        assert max(extra.emotions, key=extra.emotions.get) == "curious"

        # The memory is written in the agent's own voice, framed by its persona.
        (summarize,) = formation_requests(harness.provider, "summarize")
        assert "You are Wren." in summarize.system and "keeps a diary" in summarize.system
        assert summarize.response_schema is not None
        assert "Lisbon" in summarize.messages[-1].content
        # Metered under the formation stages, attributed to the conversation.
        stages = await rows(
            harness.db,
            "SELECT stage FROM usage_records WHERE conversation = :c ORDER BY stage",
            c=conversation,
        )
        assert {s.stage for s in stages} >= {"summarize", "rate", "classify"}


async def test_a_long_conversation_is_remembered_in_contiguous_chunks_as_of_each_moment(
    client: Client, stack: Stack, encoder: LocalEncoder
) -> None:
    summaries = {
        word: f"I remember the talk about the {word} (MEM-{word.upper()})." for word in WORDS
    }
    settings = {"memory": MemorySettings(chunk_tokens=200)}
    async with formation_worker(
        client,
        stack,
        rules=formation_rules(summaries),
        encoder=encoder,
        settings_overrides=settings,
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.1)
        receipts = [await harness.say(agent, long_message(word)) for word in WORDS]
        conversations = {r.marker.conversation_id for r in receipts if r.marker}
        assert len(conversations) == 1
        (conversation,) = conversations
        assert conversation is not None

        results = await close_and_consolidate(harness.client, conversation)
        assert len(results) >= 3  # several chunks while it ran, and the close
        assert not any(r.failed for r in results)

        records = await records_of(harness.db, agent)
        turns = [
            t.id
            for t in await rows(
                harness.db,
                "SELECT id FROM dialog_turns WHERE conversation_id = :c ORDER BY at, id",
                c=conversation,
            )
        ]
        assert len(records) == len([r for r in results if r.formed]) >= 3
        # Contiguous and non-overlapping, covering every turn exactly once, in order.
        position = 0
        for record in records:
            assert record.turn_first == turns[position]
            position = turns.index(str(record.turn_last)) + 1
        assert position == len(turns)

        derived = {
            r.id: list(r.derived_from)
            for r in await rows(
                harness.db,
                "SELECT id, derived_from FROM memory_records WHERE agent = :a",
                a=agent,
            )
        }
        by_summary = {record.summary: record for record in records}
        for number, record in enumerate(records):
            assert derived[record.id] == [r.id for r in records[:number]]

        # The as-of rule, on what the model actually received.
        formation = [
            request
            for task in ("summarize", "rate", "classify")
            for request in formation_requests(harness.provider, task)
        ]
        assert len(formation) == 3 * len(records)
        for request in formation:
            text = whole_prompt(request).lower()
            chunk_words = [w for w in WORDS if w in request.messages[-1].content.lower()]
            last = max(WORDS.index(w) for w in chunk_words)
            for later in WORDS[last + 1 :]:
                assert later not in text, f"{request.task}: holds '{later}', said after its chunk"
            if request.task.value == "summarize":
                mine = by_summary[summaries[chunk_words[0]]]
                earlier = records[: records.index(mine)]
                for memory in earlier:
                    # Earlier memories come back as the agent's own words, not as raw dialog.
                    assert memory.summary in request.messages[-2].content
                    assert request.messages[-2].role == "assistant"
                assert SUMMARY_SYSTEM in request.system


async def test_without_an_encoder_memories_are_stored_bare_and_filled_in_later(
    client: Client, stack: Stack, encoder: LocalEncoder
) -> None:
    down = {
        "encoder": "openai-compatible",
        "encoder_base_url": f"http://127.0.0.1:{free_port()}/v1",  # nothing listens there
    }
    async with formation_worker(
        client, stack, rules=formation_rules(), settings_overrides=down
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.02)
        receipt = await harness.say(agent, "Is anyone there?")
        assert receipt.marker and receipt.marker.text == "Is anyone there?"  # replies flow
        assert receipt.marker.conversation_id
        (result,) = await close_and_consolidate(harness.client, receipt.marker.conversation_id)
        (record_id,) = result.formed
        bare = await row(
            harness.db,
            "SELECT embedding IS NULL AS bare, summary FROM memory_records WHERE id = :id",
            id=record_id,
        )
        assert bare.bare and bare.summary == DEFAULT_SUMMARY

    # A later pass with the encoder back fills the vector in.
    async with formation_worker(client, stack, rules=formation_rules(), encoder=encoder) as harness:
        done = await harness.client.execute_workflow(
            MaintenanceWorkflow.run,
            MaintenanceInput(agent=agent),
            id=f"maintenance/{agent}-test",
            task_queue=harness.task_queue,
        )
        assert done.vectors_filled >= 2  # the memory and the dialog turns
        filled = await row(
            harness.db,
            "SELECT embedding IS NOT NULL AS embedded, embed_model FROM memory_records "
            "WHERE id = :id",
            id=record_id,
        )
        assert filled.embedded and filled.embed_model == encoder.name
