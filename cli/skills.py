"""``persyn skills``: list, show and refresh supplied skills and agents' libraries."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import echo_err, fail, friendly_errors

if TYPE_CHECKING:
    from activities.skills.library import SkillLibrary

app = typer.Typer(
    help="List, show and refresh skills: the supplied ones and each agent's library.",
    no_args_is_help=True,
)

AgentOption = Annotated[
    str | None,
    typer.Option("--agent", "-a", help="The agent's handle; without it, the supplied skills."),
]


def _library() -> SkillLibrary:
    from activities.skills.library import SkillLibrary
    from activities.skills.wiring import skills_status
    from schemas.settings import get_settings

    settings = get_settings()
    status = skills_status(settings)
    if not status.available:
        fail(f"skills are unavailable: {status.reason}")
    return SkillLibrary.from_settings(settings)


def _existing(library: SkillLibrary, agent: str) -> None:
    if not library.folder(agent).is_dir():
        fail(
            f"agent {agent!r} has no skill library yet: its first turn makes one, or run "
            f"`persyn skills refresh --agent {agent}`"
        )


@app.command("list")
@friendly_errors
def list_skills(
    agent: AgentOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array.")] = False,
) -> None:
    """Each skill's name, origin, protection and description (broken ones on stderr)."""
    from schemas.skills import SkillSummary

    library = _library()
    if agent is None:
        warnings: list[str] = []
        found = [
            SkillSummary(
                name=skill.name,
                description=skill.description,
                origin="supplied",
                protected=skill.protected,
                resources=library.resources(library.supplied / skill.name),
            )
            for skill in library.supplied_skills(warnings).values()
        ]
    else:
        _existing(library, agent)
        found, warnings = library.listing(agent)
    for line in warnings:
        echo_err(line)
    if as_json:
        typer.echo(json.dumps([skill.model_dump() for skill in found]))
        return
    if not found:
        typer.echo("no skills")
    for skill in found:
        flag = ", protected" if skill.protected else ""
        typer.echo(f"{skill.name} ({skill.origin}{flag}): {skill.description}")


@app.command()
@friendly_errors
def show(
    name: Annotated[str, typer.Argument(help="The skill's name.")],
    agent: AgentOption = None,
    resource: Annotated[
        str | None, typer.Option(help="Print this resource file of the skill instead.")
    ] = None,
) -> None:
    """Print a skill's front matter and instructions, or one of its resources."""
    from activities.skills.format import SkillFormatError, check_name, read
    from activities.skills.library import SkillError

    library = _library()
    if agent is None:
        try:
            folder = library.supplied / check_name(name)
            skill = read(folder, max_bytes=library.settings.max_skill_bytes)
        except SkillFormatError as err:
            raise SkillError(f"supplied skill {name[:40]!r}: {err}") from None
        if resource is not None:
            fail("--resource needs --agent (resources are read from an agent's library)")
    else:
        _existing(library, agent)
        if resource is not None:
            typer.echo(library.resource(agent, name, resource), nl=False)
            return
        skill = library.load(agent, name)
        folder = library.folder(agent) / name
    typer.echo(f"name: {skill.name}")
    typer.echo(f"description: {skill.description}")
    typer.echo(f"protected: {'yes' if skill.protected else 'no'}")
    resources = library.resources(folder)
    typer.echo(f"resources: {', '.join(resources) if resources else 'none'}")
    typer.echo("")
    typer.echo(skill.instructions)


@app.command()
@friendly_errors
def refresh(agent: AgentOption = None) -> None:
    """Copy supplied skills into libraries and restore protected ones (one agent, or all)."""
    library = _library()
    reports = [library.refresh(agent)] if agent is not None else library.refresh_all()
    if not reports:
        typer.echo("no agent libraries yet")
    for report in reports:
        for line in report.skipped:
            echo_err(line)
        restored = ", ".join(report.restored) or "none"
        added = ", ".join(report.added) or "none"
        typer.echo(f"{report.agent}: restored {restored}; added {added}")
