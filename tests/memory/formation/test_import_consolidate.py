"""`persyn import --consolidate`: imported conversations become memories, once."""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.client import Client

from schemas.memory_formation import ConsolidationResult
from store.importer import import_file
from temporal.consolidation import consolidate_conversation
from tests.harness import Stack
from tests.memory.formation.helpers import formation_rules, formation_worker, new_agent, records_of


def dialog_file(path: Path) -> Path:
    rows = [
        {
            "conversation": conversation,
            "channel": {"service": "chat", "channel": "garden"},
            "speaker": {"id": speaker, "name": speaker.title()},
            "text": text,
            "at": at,
        }
        for conversation, speaker, text, at in [
            ("first", "ada", "The tomatoes finally ripened.", "2024-05-01T09:00:00Z"),
            ("first", "bo", "Save me some seeds!", "2024-05-01T09:01:00Z"),
            ("second", "ada", "The frost took the basil.", "2024-10-12T07:30:00Z"),
        ]
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


async def test_imported_conversations_are_consolidated_once(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with formation_worker(client, stack, rules=formation_rules()) as harness:
        agent = await new_agent(harness.db)
        started: list[str] = []

        async def consolidate(conversation_id: str) -> None:
            workflow_id = await consolidate_conversation(
                harness.client,
                harness.db,
                agent=agent,
                conversation_id=conversation_id,
                task_queue=harness.task_queue,
            )
            if workflow_id is not None:
                started.append(workflow_id)

        path = dialog_file(tmp_path / "garden.jsonl")
        report = await import_file(
            harness.db, agent=agent, path=path, after_conversation=consolidate
        )
        assert len(report.conversation_ids) == 2 and len(started) == 2
        results = [
            await client.get_workflow_handle(w, result_type=ConsolidationResult).result()
            for w in started
        ]
        assert all(len(r.formed) == 1 for r in results)
        records = await records_of(harness.db, agent)
        assert sorted(r.conversation_id or "" for r in records) == sorted(report.conversation_ids)

        # Importing the same file again adds no turns, so nothing is consolidated twice.
        started.clear()
        again = await import_file(
            harness.db, agent=agent, path=path, after_conversation=consolidate
        )
        assert again.turns_added == 0 and started == []
        # And a conversation whose turns are all remembered starts nothing when asked directly.
        assert (
            await consolidate_conversation(
                harness.client,
                harness.db,
                agent=agent,
                conversation_id=report.conversation_ids[0],
                task_queue=harness.task_queue,
            )
            is None
        )
        assert len(await records_of(harness.db, agent)) == 2
