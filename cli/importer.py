"""``persyn import FILE``: bring dialog history from a file into an agent's memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from cli.common import UserError, echo_err, friendly_errors, run
from schemas.imports import ImportFormat
from schemas.settings import get_settings
from usecases import importing


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
    report, consolidations = run(
        importing.import_dialog(
            settings=get_settings(),
            path=file,
            agent=agent,
            fmt=fmt,
            embed=embed,
            consolidate=consolidate,
        )
    )
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
