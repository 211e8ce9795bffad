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
) -> None:
    """Write the JSON Schema of every workflow, update, signal and query payload."""
    from schemas.export import export_schemas

    directory.mkdir(parents=True, exist_ok=True)
    written = export_schemas(directory)
    typer.echo(f"wrote {len(written)} schemas to {directory}")
