"""Where a text could still be: every table, the span file, workflow queries and histories.

The forget audit greps each for a marker word after forgetting or retention; these helpers
do the looking, each returning where it found the word.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.client import Client

from contract import names
from observability.span_file import rotated
from schemas.conversation import WindowAnswer, WindowQuery
from store.db import Database
from store.sql import execute
from tests.harness import until


async def tables_holding(db: Database, needle: str) -> dict[str, int]:
    """Rows of every table in the database whose text form holds ``needle``, by table."""
    async with db.session() as session:
        tables = [
            str(r.table_name)
            for r in await execute(
                session,
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
            )
        ]
        found: dict[str, int] = {}
        for table in tables:
            # A row cast to text holds every column: text, JSON, arrays alike.
            count = (
                await execute(
                    session,
                    f'SELECT count(*) FROM "{table}" t WHERE strpos(CAST(t AS text), :n) > 0',
                    {"n": needle},
                )
            ).scalar_one()
            if count:
                found[table] = int(count)
        await session.commit()
    return found


def span_file_holds(path: Path, needle: str) -> bool:
    """Whether the span file (either generation) holds ``needle`` anywhere."""
    return any(
        needle in generation.read_text(encoding="utf-8", errors="replace")
        for generation in (rotated(path), path)
        if generation.exists()
    )


async def windows_holding(client: Client, conversation_ids: list[str], needle: str) -> list[str]:
    """Conversations whose ``window`` query answers with ``needle`` in it."""
    found = []
    for conversation_id in conversation_ids:
        handle = client.get_workflow_handle(names.conversation_workflow_id(conversation_id))
        answer = await handle.query(names.WINDOW, WindowQuery(), result_type=WindowAnswer)
        if needle in answer.model_dump_json():
            found.append(conversation_id)
    return found


def payloads_of(message: Message) -> Iterator[Payload]:
    """Every payload inside ``message`` (a history event), however deeply nested."""
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            items = list(value.values())
        elif isinstance(value, Message):
            items = [value]
        else:  # a repeated field
            items = list(value)
        for item in items:
            if not isinstance(item, Message):
                continue
            if isinstance(item, Payload):
                yield item
            else:
                yield from payloads_of(item)


async def agent_runs(client: Client, agent: str) -> list[tuple[str, str]]:
    """(workflow ID, run ID) of every run Temporal's visibility lists for the agent."""
    return [
        (execution.id, execution.run_id)
        async for execution in client.list_workflows(f"PersynAgent = '{agent}'")
    ]


async def histories_holding(
    client: Client, agent: str, needle: str, *, expected: set[str]
) -> tuple[set[str], list[str]]:
    """Which of the agent's workflows were read, and which hold ``needle``.

    Waits until visibility (eventually consistent) lists every workflow in ``expected``, then
    reads every run it lists. Every payload of every event (inputs, results, signals, updates,
    memos, headers) is decoded with the client's own payload codec, if it has one, before it
    is searched.
    """
    runs: list[tuple[str, str]] = []

    async def listed() -> bool:
        runs[:] = await agent_runs(client, agent)
        return expected <= {workflow_id for workflow_id, _ in runs}

    await until(listed)
    codec = client.data_converter.payload_codec
    found = []
    for workflow_id, run_id in runs:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        payloads = [p for event in history.events for p in payloads_of(event)]
        if codec is not None and payloads:
            payloads = await codec.decode(payloads)
        if any(needle.encode() in p.data for p in payloads):
            found.append(workflow_id)
    return {workflow_id for workflow_id, _ in runs}, found
