"""The ``persyn`` command: a thin Temporal client plus read views on the store.

Commands load on first use: ``persyn up`` imports the stack code and nothing else, so every
invocation starts in a fraction of the time importing all of them would take.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import NamedTuple

import typer

# Typer carries its own copy of click; its types live here.
from typer import _click as click
from typer.core import TyperCommand, TyperGroup


class Entry(NamedTuple):
    """Where a command lives: a module and a command function or a ``typer.Typer`` group."""

    module: str
    attribute: str
    help: str


COMMANDS: dict[str, Entry] = {
    "up": Entry(
        "cli.stack",
        "up",
        "Start Temporal, PostgreSQL, migrations, the worker and the local model (skipping what "
        "runs).",
    ),
    "down": Entry(
        "cli.stack",
        "down",
        "Stop the worker and model server, then Temporal and PostgreSQL; data persists for `up`.",
    ),
    "status": Entry(
        "cli.stack",
        "status",
        "Each component's health, address and PID, the Web UI URL, and every agent's inbox.",
    ),
    "chat": Entry("cli.talk", "chat", "Talk with an agent in the terminal."),
    "console": Entry(
        "cli.console_app.command", "console", "Open the full-screen operator console on an agent."
    ),
    "send": Entry(
        "cli.talk",
        "send",
        "Send one message and print the reply (or the agent's reason for silence).",
    ),
    "inbox": Entry(
        "cli.inbox",
        "inbox",
        "Messages the agent sent unprompted, and any whose delivery failed, with their state.",
    ),
    "converse": Entry(
        "cli.converse",
        "converse",
        "Start a conversation between two agents; with --wait, follow it until it stops.",
    ),
    "pacing": Entry(
        "cli.pacing", "app", "Show or set how much and how fast an agent may talk on its channels."
    ),
    "import": Entry(
        "cli.importer",
        "import_dialog",
        "Import dialog history; running it again adds only what is new.",
    ),
    "usage": Entry("cli.usage", "usage", "Exact token and cost totals from the usage ledger."),
    "trace": Entry(
        "cli.trace",
        "trace",
        "Print the trace of one activation: its spans as a tree, with timings.",
    ),
    "replay": Entry(
        "cli.replay",
        "replay",
        "Replay exported workflow histories against this code (before deploying it).",
    ),
    "agent": Entry("cli.agent", "app", "Create and inspect agents."),
    "contacts": Entry(
        "cli.contacts",
        "app",
        "List and curate the people an agent knows: rename, attach, detach, prefer, fold.",
    ),
    "channels": Entry(
        "cli.channels", "app", "List an agent's channels; group them so they share memory."
    ),
    "people": Entry(
        "cli.people",
        "app",
        "What an agent believes about people: list facts, set one, read the dossier.",
    ),
    "notes": Entry(
        "cli.notes",
        "app",
        "Durable notes about the agent, a person or a channel: list, show, add, supersede, "
        "remove, import.",
    ),
    "goals": Entry(
        "cli.goals",
        "app",
        "An agent's goals: list and set them as the operator, and decide the changes the agent "
        "asks for.",
    ),
    "approvals": Entry(
        "cli.approvals",
        "app",
        "Tool calls waiting for a person's approval: list them, approve or refuse one.",
    ),
    "calls": Entry("cli.calls", "app", "Live voice calls: list the calls that are on, end one."),
    "guardrails": Entry(
        "cli.guardrails",
        "app",
        "Guardrails over interaction history: validate rules, list them, read firings.",
    ),
    "heartbeat": Entry(
        "cli.heartbeat", "app", "Inspect, delete, restore or trigger an agent's heartbeat."
    ),
    "reminder": Entry("cli.reminder", "app", "Read and cancel the reminders agents set."),
    "schema": Entry("cli.schema", "app", "Wire schemas for integrators."),
    "memory": Entry(
        "cli.memory", "app", "Inspect and withdraw agents' memories; search and index their dialog."
    ),
    "sandbox": Entry(
        "cli.sandbox", "app", "Build the sandbox image; see whether agents' code can run, and why."
    ),
    "workspace": Entry(
        "cli.workspace",
        "app",
        "Shared workspaces several agents' sandboxes mount: create, list, show, change members, "
        "read who changed what, delete.",
    ),
    "skills": Entry(
        "cli.skills",
        "app",
        "List, show and refresh skills: the supplied ones and each agent's library.",
    ),
    "tools": Entry(
        "cli.tools",
        "app",
        "List the tools an agent can be offered: source, approval, availability, why not.",
    ),
    "serve": Entry(
        "cli.serve",
        "serve",
        "Serve the web channel: the /v1 API (OpenAPI at /openapi.json) and a chat page at /.",
    ),
    "tokens": Entry(
        "cli.tokens",
        "app",
        "Bearer tokens for the web channel (`persyn serve`): create, list, rotate, revoke.",
    ),
    "telegram": Entry(
        "cli.telegram", "app", "The Telegram channel: run the poller that hands chats to an agent."
    ),
}
"""Every top-level command, in the order ``persyn --help`` lists them."""


def load(name: str) -> click.Command:
    """The click command for ``name``, importing its module now."""
    entry = COMMANDS[name]
    target = getattr(importlib.import_module(entry.module), entry.attribute)
    if isinstance(target, typer.Typer):
        command: click.Command = typer.main.get_group(target)
    else:
        single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    """A command group that imports a command's module only when that command runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, without importing any of them."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A light stand-in, for listings such as ``persyn --help``.

        Loading every command for one line of help each would cost the start-up time this
        group exists to save.
        """
        entry = COMMANDS.get(cmd_name)
        return TyperCommand(cmd_name, help=entry.help) if entry is not None else None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command about to run, loaded for real."""
        if args and args[0] in COMMANDS:
            return args[0], load(args[0]), args[1:]
        return super().resolve_command(ctx, args)


app = typer.Typer(
    name="persyn",
    cls=LazyGroup,
    help="Run persistent agents that remember, critique themselves and keep their own schedule.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    """Run persistent agents that remember, critique themselves and keep their own schedule."""


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
