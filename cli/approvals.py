"""``persyn approvals list|approve|refuse``: tool calls waiting for a person's yes.

A tool call that needs approval (docs/approvals.md) waits in its activation until someone
decides, or is refused by default at its deadline. Approving runs the tool; refusing hands the
refusal, with its reason, to the model as the tool's result.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Annotated

import typer

from cli.common import excerpt, friendly_errors, run
from schemas.approvals import ApprovalDecision, PendingApproval
from schemas.settings import get_settings
from usecases import approvals

app = typer.Typer(
    help="Tool calls waiting for a person's approval: list them, approve or refuse one.",
    no_args_is_help=True,
)
ApprovalArg = Annotated[
    str, typer.Argument(help="The approval's ID (`persyn approvals list` shows them).")
]
AgentFilter = Annotated[
    str | None, typer.Option("--agent", "-a", help="Only this agent's (its handle).")
]
ByOpt = Annotated[
    str, typer.Option("--by", help="Who decides; the agent reads it when it is refused.")
]
WhyOpt = Annotated[str | None, typer.Option("--why", help="Why, in a sentence.")]
AllOpt = Annotated[bool, typer.Option("--all", help="Decided and expired ones too.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
EXCERPT = 100
"""How much of a call's arguments a listing shows."""


def _line(found: PendingApproval) -> str:
    deadline = found.deadline.astimezone(UTC)
    state = (
        f"waiting until {deadline:%H:%M:%S} UTC"
        if not found.status.decided
        else f"{found.status.value} by {found.decided_by}"
    )
    return (
        f"{found.approval_id}  {found.agent}  {found.tool}({excerpt(found.arguments, EXCERPT)})  "
        f"asked by {found.asked_by} on {found.channel}  [{state}]\n    why asked: {found.reason}"
    )


def _decided(decision: ApprovalDecision) -> str:
    why = f": {decision.why}" if decision.why else ""
    return (
        f"{decision.status.value} {decision.approval_id} ({decision.tool}) by "
        f"{decision.decided_by}{why}"
    )


@app.command("list")
@friendly_errors
def list_(agent: AgentFilter = None, all_: AllOpt = False, as_json: JsonOpt = False) -> None:
    """What waits for a decision now (every approval with --all), oldest first."""
    settings = get_settings()
    found = run(approvals.history(settings, agent) if all_ else approvals.pending(settings, agent))
    if as_json:
        typer.echo(json.dumps([item.model_dump(mode="json") for item in found], indent=2))
        return
    if not found:
        typer.echo("nothing waits for approval" if not all_ else "no approvals")
    for item in found:
        typer.echo(_line(item))


@app.command()
@friendly_errors
def approve(
    approval_id: ApprovalArg,
    agent: AgentFilter = None,
    by: ByOpt = approvals.OPERATOR,
    why: WhyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Approve a waiting tool call: it runs, once."""
    decision = run(approvals.decide(get_settings(), approval_id, True, by, why, agent))
    typer.echo(decision.model_dump_json(indent=2) if as_json else _decided(decision))


@app.command()
@friendly_errors
def refuse(
    approval_id: ApprovalArg,
    agent: AgentFilter = None,
    by: ByOpt = approvals.OPERATOR,
    why: WhyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Refuse a waiting tool call: it never runs, and the agent reads who refused and why."""
    decision = run(approvals.decide(get_settings(), approval_id, False, by, why, agent))
    typer.echo(decision.model_dump_json(indent=2) if as_json else _decided(decision))
