"""``persyn import FILE``: bring dialog history from a file into an agent's memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from activities.memory.encoders import build_encoder
from cli.common import UserError, echo_err, friendly_errors, run
from schemas.imports import ImportFormat, ImportReport
from schemas.settings import get_settings
from store.db import Database
from store.importer import import_file
from temporal.client import connect
from temporal.consolidation import consolidate_conversation


async def _import(
    path: Path, agent: str, fmt: ImportFormat, embed: bool, consolidate: bool
) -> tuple[ImportReport, list[str]]:
    settings = get_settings()
    db = Database(settings.database_dsn(), pool_size=2)
    encoder = build_encoder(settings) if embed else None
    started: list[str] = []
    after_conversation = None
    if consolidate:
        client = await connect(settings)

        async def after_conversation(conversation_id: str) -> None:
            workflow_id = await consolidate_conversation(
                client,
                db,
                agent=agent,
                conversation_id=conversation_id,
                task_queue=settings.task_queue,
            )
            if workflow_id is not None:
                started.append(workflow_id)

    try:
        report = await import_file(
            db,
            agent=agent,
            path=path,
            fmt=fmt,
            encoder=encoder,
            after_conversation=after_conversation,
        )
        return report, started
    finally:
        if encoder is not None:
            await encoder.aclose()
        await db.aclose()


@friendly_errors
def import_dialog(
    file: Annotated[
        Path, typer.Argument(help="A JSONL file (docs/import-format.md) or LoCoMo JSON.")
    ],
    agent: Annotated[str, typer.Option("--agent", help="The agent that remembers it.")] = "",
    fmt: Annotated[
        ImportFormat, typer.Option("--format", help="File format; auto tells by the first byte.")
    ] = ImportFormat.AUTO,
    embed: Annotated[
        bool, typer.Option("--embed/--no-embed", help="Embed turns now, or leave it for later.")
    ] = True,
    consolidate: Annotated[
        bool,
        typer.Option(
            "--consolidate", help="Also form memories (in the background, on the running stack)."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Import dialog history; running it again adds only what is new."""
    if not agent:
        raise UserError("which agent? add --agent HANDLE (see `persyn agent list`)")
    if embed and not as_json:
        echo_err("importing (embedding every new turn may take a while)...")
    report, consolidations = run(_import(file, agent, fmt, embed, consolidate))
    if as_json:
        typer.echo(
            json.dumps(
                {**report.model_dump(mode="json"), "consolidations": consolidations}, indent=2
            )
        )
        return
    if report.notice:
        echo_err(f"note: {report.notice}")
    if not report.turns_added:
        typer.echo(f"nothing new: all {report.turns:,} turns of {file.name} were already imported")
        return
    typer.echo(
        f"imported {report.turns_added:,} of {report.turns:,} turns in "
        f"{len(report.conversation_ids):,} conversations ({report.conversations_added:,} new) "
        f"for {agent}; {report.turns_embedded:,} embedded"
    )
    if consolidate:
        typer.echo(
            f"forming memories of {len(consolidations):,} conversations in the background: "
            f"see `persyn memory list --agent {agent}`"
        )
