"""``persyn workspace create|list|show|add-member|remove-member|log|delete``: shared workspaces.

A shared workspace is a volume each member agent's sandbox mounts at ``/shared/{name}``,
read-write (``handle:rw``) or read-only (``handle:ro``). Every change a member's sandbox makes
there is recorded with who made it; ``log`` reads that record.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Annotated

import typer

from cli.common import UserError, excerpt, friendly_errors, run
from cli.contacts import JsonOpt
from schemas.settings import get_settings
from schemas.workspaces import WorkspaceChange, WorkspacePublic
from usecases import workspaces

app = typer.Typer(
    help="Shared workspaces several agents' sandboxes mount: create, list, show, change "
    "members, read who changed what, delete.",
    no_args_is_help=True,
)
NameArg = Annotated[str, typer.Argument(help="The workspace's name, e.g. 'essay'.")]
MemberOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--member", "-m", help="An agent and its mode: 'ada:rw' or 'bo:ro' (repeat for more)."
    ),
]


def _members(found: WorkspacePublic) -> str:
    return ", ".join(f"{m.agent}:{m.mode.value}" for m in found.members) or "(no members)"


def _print(found: WorkspacePublic, as_json: bool) -> None:
    if as_json:
        typer.echo(found.model_dump_json(indent=2))
        return
    typer.echo(f"workspace:  {found.name}  (at /shared/{found.name} in each member's sandbox)")
    typer.echo(f"members:    {_members(found)}")
    typer.echo(f"volume:     {found.volume}")
    at = found.created_at.astimezone(UTC)
    typer.echo(f"created:    {at:%Y-%m-%d %H:%M} UTC by {found.created_by}")


def change_line(change: WorkspaceChange) -> str:
    """One change as ``log`` prints it."""
    lines = f"+{change.lines_added}/-{change.lines_removed} lines"
    size = f"{change.bytes_before}->{change.bytes_after} bytes"
    return (
        f"{change.at.astimezone(UTC):%Y-%m-%d %H:%M:%S}  {change.agent:<12}  "
        f"{change.kind.value:<8}  {change.path!r}  {lines}, {size}"
    )


@app.command()
@friendly_errors
def create(name: NameArg, member: MemberOpt = None, as_json: JsonOpt = False) -> None:
    """Create a workspace (its volume in the sandbox engine) with its first members."""
    found = run(
        workspaces.create_workspace(settings=get_settings(), name=name, members=member or [])
    )
    _print(found, as_json)


@app.command("list")
@friendly_errors
def list_(as_json: JsonOpt = False) -> None:
    """Every workspace and its members."""
    found = run(workspaces.list_workspaces(settings=get_settings()))
    if as_json:
        typer.echo(json.dumps([w.model_dump(mode="json") for w in found], indent=2))
        return
    if not found:
        typer.echo("no workspaces")
    for workspace in found:
        typer.echo(f"{workspace.name:<32}  {_members(workspace)}")


@app.command()
@friendly_errors
def show(name: NameArg, as_json: JsonOpt = False) -> None:
    """One workspace: its members, its volume, who made it."""
    _print(run(workspaces.show_workspace(settings=get_settings(), name=name)), as_json)


@app.command("add-member")
@friendly_errors
def add_member(
    name: NameArg,
    member: Annotated[str, typer.Argument(help="The agent and its mode: 'ada:rw' or 'bo:ro'.")],
    as_json: JsonOpt = False,
) -> None:
    """Add a member (or change its mode); its sandbox mounts the workspace from its next command."""
    found = run(workspaces.add_member(settings=get_settings(), name=name, member=member))
    _print(found, as_json)


@app.command("remove-member")
@friendly_errors
def remove_member(
    name: NameArg,
    agent: Annotated[str, typer.Argument(help="The member's handle.")],
    as_json: JsonOpt = False,
) -> None:
    """Take a member out; its sandbox loses the mount before its next command."""
    found = run(workspaces.remove_member(settings=get_settings(), name=name, agent=agent))
    _print(found, as_json)


@app.command()
@friendly_errors
def delete(
    name: NameArg,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a workspace for good: its files (the volume), its members and its change log."""
    if not yes and not typer.confirm(
        f"Delete workspace {name!r} with its files and its change log, for good?"
    ):
        raise UserError("nothing deleted")
    found = run(workspaces.delete_workspace(settings=get_settings(), name=name))
    typer.echo(f"deleted workspace {found.name} (was: {_members(found)})")


@app.command()
@friendly_errors
def log(
    name: NameArg,
    limit: Annotated[int, typer.Option("--limit", "-n", help="The newest N changes.")] = 50,
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="Only this agent's changes.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Who changed which file, when, and by how much (oldest first)."""
    found = run(
        workspaces.workspace_log(settings=get_settings(), name=name, limit=limit, agent=agent)
    )
    if as_json:
        typer.echo(json.dumps([c.model_dump(mode="json") for c in found], indent=2))
        return
    if not found:
        typer.echo("no changes yet")
    for change in found:
        typer.echo(change_line(change))
        if change.excerpt:
            # An agent wrote it: no control character of it reaches the terminal.
            shown = "".join(c if c.isprintable() else "?" for c in excerpt(change.excerpt, 100))
            typer.echo(f"    {shown}")
