"""The forget audit: after `forget` and after retention, the text is nowhere Persyn keeps it.

Each test gives the text a marker word said nowhere else, shows the marker did reach the
places under audit (so a clean result is not vacuous), forgets or expires it, and then greps
every table of the database, the span file, the conversations' ``window`` queries and, for a
forgotten memory, every workflow history of the agent (payloads decoded with the client's
data converter).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from temporalio.client import WorkflowFailureError
from temporalio.service import RPCError

from activities.gateway.providers.scripted import ScriptRule
from activities.memory.encoders.local import LocalEncoder
from activities.memory.forgetting import forget_memory
from activities.memory.retention import RetentionActivities
from contract import names
from observability import tracing
from schemas.memory import MemorySettings
from schemas.memory_formation import PurgeInput
from store.sql import execute
from temporal.client import connect
from tests.harness import Harness, Stack, until
from tests.memory.forget_audit import (
    histories_holding,
    span_file_holds,
    tables_holding,
    windows_holding,
)
from tests.memory.formation.helpers import (
    close_and_consolidate,
    consolidation_ids,
    formation_rules,
    formation_worker,
    new_agent,
    records_of,
    rows,
)


def marker() -> str:
    """A word said nowhere else (letters only, so no escaping changes it)."""
    return "zq" + "".join(c for c in uuid.uuid4().hex if c.isalpha()) + "zq"


@asynccontextmanager
async def traced_formation_worker(
    stack: Stack, span_file: Path, encoder: LocalEncoder, rules: list[ScriptRule]
) -> AsyncIterator[tuple[Harness, tracing.Tracing]]:
    """A worker that forms memories, recalls them, and records full content in ``span_file``."""
    overrides: dict[str, object] = {
        "tracing_exporters": ["file"],
        "tracing_file": span_file,
        "tracing_content": "full",
    }
    settings = stack.settings(**overrides)
    client = await connect(settings, address=stack.temporal_address)
    traced = tracing.setup(settings)
    assert traced is not None
    try:
        async with formation_worker(
            client, stack, rules=rules, encoder=encoder, settings_overrides=overrides
        ) as harness:
            yield harness, traced
    finally:
        traced.close()


async def quiet(
    harness: Harness, agent: str, traced: tracing.Tracing, *, conversations: Sequence[str] = ()
) -> None:
    """Wait until only the agent's inbox (and ``conversations``) run; flush the spans made.

    Deferred deliberations run after their activations' receipts and call models with the same
    prompts; what they trace must be in the span file before the audit, not exported after it.
    """
    async with harness.db.session() as session:
        activations = [
            str(r.id)
            for r in await execute(
                session, "SELECT id FROM activations WHERE agent = :a", {"a": agent}
            )
        ]
    for activation_id in activations:
        # Released activations go on deliberating after their receipt: wait for their end.
        handle = harness.client.get_workflow_handle(names.activation_workflow_id(activation_id))
        with contextlib.suppress(RPCError, WorkflowFailureError):
            await handle.result()

    async def only_the_inbox() -> bool:
        running = [
            e.id
            async for e in harness.client.list_workflows(
                f"PersynAgent = '{agent}' AND ExecutionStatus = 'Running'"
            )
        ]
        inbox = names.agent_workflow_id(agent)
        return set(running) <= {inbox, *map(names.conversation_workflow_id, conversations)}

    await until(only_the_inbox)
    traced.flush()


async def test_a_forgotten_memory_is_nowhere_only_who_when_and_why_stay(
    stack: Stack, encoder: LocalEncoder, tmp_path: Path
) -> None:
    word = marker()
    summary = f"I learned that Ada keeps {word} bees on the roof of her house in Lisbon."
    span_file = tmp_path / "spans.jsonl"
    rules = formation_rules({"roof": summary})
    async with traced_formation_worker(stack, span_file, encoder, rules) as (harness, traced):
        agent = await new_agent(harness.db, idle_minutes=0.05)
        first = await harness.say(agent, "I keep bees up on my roof, you know.")
        assert first.marker and first.marker.conversation_id
        await close_and_consolidate(harness.client, first.marker.conversation_id)
        (record,) = [r for r in await records_of(harness.db, agent) if word in r.summary]

        # A later conversation recalls it: the memory is copied into that turn's prompt.
        second = await harness.say(agent, "Tell me again about Ada and her bees in Lisbon.")
        assert second.marker and second.marker.conversation_id
        await close_and_consolidate(harness.client, second.marker.conversation_id)
        conversations = [first.marker.conversation_id, second.marker.conversation_id]
        await quiet(harness, agent, traced)
        before = await tables_holding(harness.db, word)
        assert {"memory_records", "memory_formations", "prompts"} <= before.keys(), before
        assert span_file_holds(span_file, word)

        result = await forget_memory(
            harness.db,
            record_id=record.id,
            actor="ops",
            reason="Ada asked",
            now=datetime.now(UTC),
            span_file=span_file,
        )
        assert result is not None and not result.already

        assert await tables_holding(harness.db, word) == {}
        assert not span_file_holds(span_file, word)
        assert await windows_holding(harness.client, conversations, word) == []
        activations = await rows(harness.db, "SELECT id FROM activations WHERE agent = :a", a=agent)
        expected = {
            names.agent_workflow_id(agent),
            *(names.conversation_workflow_id(c) for c in conversations),
            *(names.activation_workflow_id(a.id) for a in activations),
            *[
                c
                for conversation in conversations
                for c in await consolidation_ids(harness.client, conversation)
            ],
        }
        read, holding = await histories_holding(harness.client, agent, word, expected=expected)
        # The agent, both conversations, their activations and consolidations were read.
        assert len(expected) >= 6 and expected <= read and holding == []

        (audit,) = await rows(
            harness.db,
            "SELECT actor, reason, at, summary FROM memory_audit WHERE record_id = :r",
            r=record.id,
        )
        assert (audit.actor, audit.reason, audit.summary) == ("ops", "Ada asked", None)
        (kept,) = await rows(
            harness.db,
            "SELECT forgotten_at IS NOT NULL AS gone, importance FROM memory_records WHERE id = :r",
            r=record.id,
        )
        assert kept.gone and kept.importance == 7  # metadata stays, the text does not


async def test_retention_drops_old_dialog_from_every_copy_and_open_windows(
    stack: Stack, encoder: LocalEncoder, tmp_path: Path
) -> None:
    word = marker()
    span_file = tmp_path / "spans.jsonl"
    async with traced_formation_worker(stack, span_file, encoder, formation_rules()) as (
        harness,
        traced,
    ):
        agent = await new_agent(harness.db)  # the conversation stays open throughout
        # The scripted model echoes: the reply copies the words into the outbox and markers.
        # Not a request to remember: a fact kept at request is a memory, and outlives retention.
        said = await harness.say(agent, f"The {word} signal came from the lighthouse.")
        assert said.marker and said.marker.conversation_id
        conversation = said.marker.conversation_id
        await quiet(harness, agent, traced, conversations=[conversation])
        before = await tables_holding(harness.db, word)
        copies = {"dialog_turns", "prompts", "outbox", "completion_markers", "activations"}
        assert copies <= before.keys(), before
        assert await windows_holding(harness.client, [conversation], word) == [conversation]
        assert span_file_holds(span_file, word)

        # A maintenance firing two days on, with a one-day window: everything said is old.
        retention = RetentionActivities(
            harness.db,
            None,
            MemorySettings(dialog_retention_days=1),
            client=harness.client,
            span_file=span_file,
        )
        purged = await retention.purge(
            PurgeInput(agent=agent, now=datetime.now(UTC) + timedelta(days=2))
        )
        assert purged.dialog_turns == 2

        assert await tables_holding(harness.db, word) == {}
        assert not span_file_holds(span_file, word)

        async def window_clean() -> bool:
            return await windows_holding(harness.client, [conversation], word) == []

        await until(window_clean)
        # The conversation goes on over its shortened window.
        later = await harness.say(agent, "Are you still there?")
        assert later.marker and later.marker.conversation_id == conversation
        assert later.marker.text
