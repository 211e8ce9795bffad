"""``persyn schema export DIR``: JSON Schemas of every wire model, for integrators."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from cli.common import friendly_errors

app = typer.Typer(help="Wire schemas for integrators.", no_args_is_help=True)


def _write(directory: Path, *, public: bool) -> list[Path]:
    from contract.catalog import documents

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, document in documents(public=public).items():
        path = directory / name
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
        written.append(path)
    return written


def export_schemas(directory: Path) -> list[Path]:
    """Write one JSON Schema file per wire model, and ``index.json``, into ``directory``.

    Files are overwritten; nothing else in the directory is touched.

    Args:
        directory: Where to write (created if missing).

    Returns:
        The files written: the model schemas by name, then the index.
    """
    return _write(directory, public=False)


def export_public(directory: Path) -> list[Path]:
    """Write the integrator bundle alone: the public handlers' models and their index.

    Args:
        directory: Where to write (created if missing).

    Returns:
        The files written: the model schemas by name, then the index.
    """
    return _write(directory, public=True)


@app.command()
@friendly_errors
def export(
    directory: Annotated[Path, typer.Argument(help="Where to write the .json files.")],
    public: Annotated[
        bool,
        typer.Option(
            "--public",
            help="Only the integrator bundle: the public handlers' payloads and their index.",
        ),
    ] = False,
) -> None:
    """Write the JSON Schema of every workflow, update, signal and query payload."""
    written = export_public(directory) if public else export_schemas(directory)
    # The index is one of the files written; the rest are one schema per model.
    typer.echo(f"wrote {len(written) - 1} schemas and index.json to {directory}")
