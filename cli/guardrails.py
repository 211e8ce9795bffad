"""``persyn guardrails check|list|firings``: the rules over interaction history, and what fired.

``check FILE`` validates a rules file and prints one line per problem (exit 2 when there is
one); ``list`` shows the rules in force; ``firings`` lists what fired, with its evidence (the
operator's inbox of guardrail notifications).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer

from cli.common import friendly_errors, run
from schemas.ids import check_handle
from schemas.settings import get_settings

app = typer.Typer(
    help="Guardrails over interaction history: validate rules, list them, read firings.",
    no_args_is_help=True,
)


@app.command()
@friendly_errors
def check(
    file: Annotated[Path, typer.Argument(help="The rules file (YAML) to validate.")],
) -> None:
    """Validate a rules file: one line per problem, exit 2 if there is any."""
    from usecases.guardrails import check_rules_file

    problems = check_rules_file(file)
    for line in problems:
        typer.echo(line, err=True)
    if problems:
        raise typer.Exit(2)
    typer.echo(f"{file}: ok")


@app.command("list")
@friendly_errors
def list_rules(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per rule.")] = False,
) -> None:
    """The rules in force (the configured file, or the shipped defaults)."""
    from usecases.guardrails import active_rules

    for rule in active_rules(get_settings()):
        if as_json:
            typer.echo(json.dumps(rule.model_dump(mode="json"), ensure_ascii=False))
            continue
        mode = "blocking" if rule.blocking else "background"
        state = "" if rule.enabled else " (disabled)"
        actions = ", ".join(a.value for a in rule.actions)
        typer.echo(f"{rule.id}{state}: {rule.pattern.kind}, {mode}; {actions}")
        if rule.description:
            typer.echo(f"  {rule.description}")


@app.command()
@friendly_errors
def firings(
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="Only this agent's firings.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many (newest).")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """What the guardrails caught, with the evidence (turn IDs), oldest first."""
    from usecases.guardrails import firings as list_firings

    if agent is not None:
        check_handle(agent)
    views = run(list_firings(get_settings(), agent=agent, limit=limit))
    for view in views:
        if as_json:
            record = dataclasses.asdict(view)
            record["fired_at"] = view.fired_at.isoformat()
            record["notified_at"] = view.notified_at.isoformat() if view.notified_at else None
            typer.echo(json.dumps(record, ensure_ascii=False))
            continue
        notified = " (webhook told)" if view.notified_at else ""
        typer.echo(
            f"{view.fired_at:%Y-%m-%d %H:%M} {view.agent} {view.rule_id} "
            f"[{', '.join(view.actions)}]{notified}\n  {view.summary}\n"
            f"  evidence: {' '.join(view.evidence) or '-'}; person {view.person_id or '-'}, "
            f"{view.channel or '-'}, conversation {view.conversation_id or '-'}, "
            f"activation {view.activation_id or '-'}"
        )
    if not views and not as_json:
        typer.echo("no guardrail firings" + (f" for {agent}" if agent else ""))
