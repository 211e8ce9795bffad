"""The ``persyn`` command: a thin Temporal client plus read views on the store."""

from __future__ import annotations

import gc
import os
import sys

import typer

from cli import (
    agent,
    heartbeat,
    importer,
    inbox,
    memory,
    memory_search,
    reminder,
    schema,
    stack,
    talk,
    trace,
    usage,
)

app = typer.Typer(
    name="persyn",
    help="Run persistent agents that remember, critique themselves and keep their own schedule.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command()(stack.up)
app.command()(stack.down)
app.command()(stack.status)
app.command()(talk.chat)
app.command()(talk.send)
app.command()(inbox.inbox)
app.command("import")(importer.import_dialog)
app.command()(usage.usage)
app.command()(trace.trace)
app.add_typer(agent.app, name="agent")
app.add_typer(heartbeat.app, name="heartbeat")
app.add_typer(reminder.app, name="reminder")
app.add_typer(schema.app, name="schema")
# One `memory` group: list/show/forget/cull beside search/index/reindex.
memory.app.add_typer(memory_search.app)
app.add_typer(memory.app, name="memory")


def main() -> None:
    """Console entry point: run the app, then exit without the Temporal runtime's exit crash."""
    code = 0
    try:
        app(standalone_mode=True)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    gc.collect()
    sys.stdout.flush()
    sys.stderr.flush()
    # Short-lived processes holding a Temporal client can abort at interpreter exit
    # (PyGILState_Release); leaving through os._exit after flushing avoids it.
    os._exit(code)


if __name__ == "__main__":
    main()
