"""``persyn schema export DIR``: JSON Schemas of every wire model, for integrators."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.common import friendly_errors

app = typer.Typer(help="Wire schemas for integrators.", no_args_is_help=True)


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
    from schemas.export import export_public, export_schemas

    directory.mkdir(parents=True, exist_ok=True)
    written = export_public(directory) if public else export_schemas(directory)
    # The index is one of the files written; the rest are one schema per model.
    typer.echo(f"wrote {len(written) - 1} schemas and index.json to {directory}")
