"""``persyn people facts|observe|brief``: what an agent believes about the people it knows.

``observe`` records a fact an operator sets (trust ``operator``, outranking every inference);
``brief`` prints the dossier on a person, synthesised from all their active observations and
kept until those change; ``facts`` lists the active observations behind it.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from cli.common import UserError, friendly_errors, run
from cli.contacts import AgentOpt, JsonOpt
from schemas.settings import get_settings
from schemas.text import clean_text
from usecases import people

app = typer.Typer(
    help="What an agent believes about people: list facts, set one, read the dossier.",
    no_args_is_help=True,
)
WhoArg = Annotated[
    str, typer.Argument(help="The person: their ID, name or a speaker ID; `self` for the agent.")
]


def _type_label(value: str) -> str:
    from activities.observations.activities import type_label

    label = type_label(clean_text(value, what="the type", max_chars=64))
    if label == "fact" and value.strip().lower() != "fact":
        raise UserError(f"{value[:40]!r} is not a type label: use letters, digits and _")
    return label


@app.command()
@friendly_errors
def facts(agent: AgentOpt, who: WhoArg, as_json: JsonOpt = False) -> None:
    """The active facts about a person, best-trusted first."""
    from activities.observations.source import LABELS, ranked

    found = ranked(run(people.facts(settings=get_settings(), agent=agent, who=who)))
    if as_json:
        typer.echo(json.dumps([o.model_dump(mode="json") for o in found], indent=2))
        return
    if not found:
        typer.echo("no facts")
    for o in found:
        typer.echo(f"{o.id}  {o.type}: {o.value}  [{LABELS[o.trust]}, {o.observed_at:%Y-%m-%d}]")


@app.command()
@friendly_errors
def observe(
    agent: AgentOpt,
    who: WhoArg,
    fact: Annotated[str, typer.Argument(help="The fact, in a sentence.")],
    type_: Annotated[str, typer.Option("--type", "-t", help="Its type label, e.g. home_city.")],
    replaces: Annotated[
        str | None, typer.Option("--replaces", help="The ID of an active fact this replaces.")
    ] = None,
) -> None:
    """Set a fact about a person as the operator; it outranks anything inferred."""
    value = clean_text(fact, what="the fact", max_chars=2000)
    label = _type_label(type_)

    from store.queries.observations import ObservationConflictError

    observing = people.observe(
        settings=get_settings(),
        agent=agent,
        who=who,
        type_label=label,
        value=value,
        replaces=replaces,
    )
    try:
        noted = run(observing)
    except ObservationConflictError as err:
        raise UserError(f"{err}: see persyn people facts") from None
    typer.echo(f"noted {noted}: {label} = {value}")


@app.command()
@friendly_errors
def brief(agent: AgentOpt, who: WhoArg) -> None:
    """The dossier on a person from all their active facts (written again when they change)."""
    from activities.observations.dossier import DossierError
    from workers.build import build_dependencies

    async def act() -> str:
        deps = build_dependencies(get_settings())
        try:
            found = await people.brief(
                settings=deps.settings, db=deps.db, gateway=deps.gateway, agent=agent, who=who
            )
        except DossierError as err:
            raise UserError(str(err)) from None
        finally:
            await deps.aclose()
        kept = "kept" if found.cached else "written now"
        return f"{found.subject} ({found.facts} facts; brief {kept})\n\n{found.brief}"

    typer.echo(run(act()))
