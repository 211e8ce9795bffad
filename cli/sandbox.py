"""``persyn sandbox``: build the local sandbox image and see whether code can run."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from cli.common import fail, friendly_errors, run

app = typer.Typer(
    help="Build the sandbox image; see whether agents' code can run, and why.",
    no_args_is_help=True,
)
image_app = typer.Typer(help="The sandbox image.", no_args_is_help=True)
app.add_typer(image_app, name="image")


@image_app.command("build")
@friendly_errors
def build(
    base: Annotated[
        str,
        typer.Option(
            help="'python': Debian minbase with python3-minimal (about a minute); "
            "'busybox': a 2 MB shell-only image."
        ),
    ] = "python",
    tag: Annotated[
        str | None, typer.Option(help="Image name; default: the sandbox.image setting.")
    ] = None,
) -> None:
    """Build a minimal image from local packages and import it into the engine (no registry)."""
    from activities.sandbox.image import ImageBuildError, build_image
    from schemas.settings import get_settings

    if base not in ("python", "busybox"):
        fail(f"--base {base!r}: choose 'python' or 'busybox'")
    settings = get_settings().sandbox
    name = tag or settings.image
    typer.echo(f"building {name} from {base} ...")
    try:
        image_id = build_image(
            "python" if base == "python" else "busybox", name, docker_host=settings.docker_host
        )
    except ImageBuildError as error:
        fail(str(error))
    typer.echo(f"built {name} ({image_id[:19]})")


@app.command()
@friendly_errors
def status(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """Whether sandboxed code execution is available (and why not), its isolation and limits."""
    from activities.sandbox import sandbox_availability
    from schemas.settings import get_settings

    settings = get_settings().sandbox
    availability = run(sandbox_availability(settings))
    if as_json:
        typer.echo(
            json.dumps({**availability.model_dump(), "settings": settings.model_dump(mode="json")})
        )
    else:
        state = "available" if availability.available else f"unavailable: {availability.reason}"
        typer.echo(f"sandbox: {state}")
        typer.echo(
            f"  provider {settings.provider}, image {settings.image}, network {settings.network}, "
            f"runtime {settings.runtime}"
        )
        typer.echo(
            f"  limits: {settings.memory_mb} MB memory, {settings.pids_limit} pids, "
            f"{settings.cpus:g} CPUs, {settings.command_timeout_seconds:g} s per command"
        )
        workspace = settings.workspace or "none"
        typer.echo(f"  workspace: {workspace}")
    if not availability.available:
        raise typer.Exit(1)
