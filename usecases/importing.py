"""Bring dialog history from a file into an agent's memory, optionally forming memories from it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.client import Client

from activities.memory.encoders import build_encoder
from schemas.imports import ImportFormat, ImportReport
from schemas.settings import Settings
from store.db import Database
from store.importer import import_file
from temporal.client import connect
from temporal.consolidation import consolidate_conversation
from usecases.store import open_store


async def import_dialog(
    *,
    settings: Settings,
    path: Path,
    agent: str,
    fmt: ImportFormat,
    embed: bool,
    consolidate: bool,
) -> tuple[ImportReport, list[str]]:
    """Import a file of dialog into an agent's history.

    Args:
        settings: Where the store and Temporal are.
        path: The file to read.
        agent: The agent whose history it joins.
        fmt: The file's format.
        embed: Embed the imported turns now.
        consolidate: Start memory formation for each imported conversation.

    Returns:
        The import's report and the IDs of the consolidation workflows it started.
    """
    async with open_store(settings, pool_size=2) as db:
        encoder = build_encoder(settings) if embed else None
        try:
            started: list[str] = []
            after = None
            if consolidate:
                after = _consolidating(settings, db, agent, await connect(settings), started)
            report = await import_file(
                db, agent=agent, path=path, fmt=fmt, encoder=encoder, after_conversation=after
            )
            return report, started
        finally:
            if encoder is not None:
                await encoder.aclose()


def _consolidating(
    settings: Settings, db: Database, agent: str, client: Client, started: list[str]
) -> Callable[[str], Awaitable[None]]:
    """After each imported conversation: start its memory formation, noting the workflow."""

    async def after_conversation(conversation_id: str) -> None:
        workflow_id = await consolidate_conversation(
            client, db, agent=agent, conversation_id=conversation_id, task_queue=settings.task_queue
        )
        if workflow_id is not None:
            started.append(workflow_id)

    return after_conversation
