"""``persyn up``, ``persyn down``, ``persyn status``: the embedded stack (or an existing one)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import friendly_errors
from schemas.settings import get_settings
from workers.process import start_supervisor

if TYPE_CHECKING:
    from workers.stack import ComponentStatus


def _table(components: list[ComponentStatus]) -> str:
    rows = [("component", "health", "address", "pid", "detail")] + [
        (c.name, "ok" if c.healthy else "DOWN", c.address, str(c.pid or "-"), c.detail)
        for c in components
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _sandbox_line() -> str:
    """Whether agents can run code, or why not, in one line (it never fails the status)."""
    from activities.sandbox import sandbox_availability
    from cli.common import run

    availability = run(sandbox_availability(get_settings().sandbox))
    return "Sandbox: " + ("available" if availability.available else availability.reason)


@friendly_errors
def up() -> None:
    """Start Temporal, PostgreSQL, migrations, the worker and the local model (skipping what runs).

    The worker and the model server run under a supervisor that restarts them if they die.
    """
    started = time.perf_counter()
    settings = get_settings()
    # The supervisor, and with it the worker, goes first: its imports run beside our own.
    supervisor = start_supervisor(settings)
    from workers.stack import EmbeddedStack

    components = EmbeddedStack(settings).up(supervisor=supervisor)
    typer.echo(_table(components))
    typer.echo(f"ready in {time.perf_counter() - started:.1f}s")
    if settings.embedded:
        typer.echo(f"Temporal Web UI: {settings.ui_url}")
    if not all(c.healthy for c in components):
        raise typer.Exit(1)


@friendly_errors
def down() -> None:
    """Stop the worker and model server, then Temporal and PostgreSQL; data persists for `up`."""
    from workers.stack import EmbeddedStack

    EmbeddedStack(get_settings()).down()
    typer.echo("stopped")


@friendly_errors
def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Each component's health, address and PID, and the Web UI URL."""
    from workers.stack import EmbeddedStack

    settings = get_settings()
    components = EmbeddedStack(settings).status()
    if as_json:
        typer.echo(json.dumps([c.model_dump() for c in components], indent=2))
    else:
        typer.echo(_table(components))
        if settings.embedded:
            typer.echo(f"Temporal Web UI: {settings.ui_url}")
        typer.echo(_sandbox_line())
    if not all(c.healthy for c in components):
        raise typer.Exit(1)
