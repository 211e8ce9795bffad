"""``persyn tokens create|list|rotate|revoke``: bearer tokens of the web channel.

One per integrator, each a tenant: its channels, speakers, streams and markers are its own.
The plain token is printed once, at creation; only its SHA-256 is stored, so a lost token is
rotated (a replacement in the same tenant) and revoked, never recovered.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer

from cli.common import echo_err, friendly_errors, run
from schemas.settings import get_settings
from usecases import tokens

app = typer.Typer(
    help="Bearer tokens for the web channel (`persyn serve`): create, list, rotate, revoke.",
    no_args_is_help=True,
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@app.command()
@friendly_errors
def create(
    name: Annotated[str, typer.Argument(help="Who the token is for (an integrator's name).")],
    agent: Annotated[
        list[str] | None,
        typer.Option("--agent", "-a", help="Limit the token to this agent (repeatable)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a token and print it once: store it now, it cannot be shown again."""
    record, plain = run(tokens.create_token(settings=get_settings(), name=name, agents=agent))
    if as_json:
        typer.echo(json.dumps({**asdict(record), "token": plain}, indent=2, default=str))
        return
    scope = ", ".join(record.agents) if record.agents else "every agent"
    echo_err(f"token {record.token_id} for {record.name} ({scope}); it is shown only now:")
    typer.echo(plain)


@app.command("list")
@friendly_errors
def list_(as_json: JsonOpt = False) -> None:
    """Every token with its scope; revoked ones are marked."""
    found = run(tokens.list_tokens(settings=get_settings()))
    if as_json:
        typer.echo(json.dumps([asdict(t) for t in found], indent=2, default=str))
        return
    if not found:
        typer.echo("no tokens: create one with `persyn tokens create NAME`")
    for token in found:
        scope = ",".join(token.agents) if token.agents else "*"
        state = f"revoked {token.revoked_at:%Y-%m-%d %H:%M}" if token.revoked_at else "active"
        tenant = "" if token.tenant == token.token_id else f"  tenant {token.tenant}"
        typer.echo(f"{token.token_id}  {token.name:<24} {scope:<24} {state}{tenant}")


@app.command()
@friendly_errors
def rotate(
    token_id: Annotated[str, typer.Argument(help="The token to replace (its ID, from `list`).")],
    as_json: JsonOpt = False,
) -> None:
    """Make a replacement token in the same tenant and print it once; revoke the old one later.

    The replacement sees the same conversations, streams and markers as the token it replaces.
    """
    record, plain = run(tokens.rotate_token(settings=get_settings(), token_id=token_id))
    if as_json:
        typer.echo(json.dumps({**asdict(record), "token": plain}, indent=2, default=str))
        return
    echo_err(
        f"token {record.token_id} for {record.name} replaces {token_id} (tenant "
        f"{record.tenant}); revoke the old one once it is unused. It is shown only now:"
    )
    typer.echo(plain)


@app.command()
@friendly_errors
def revoke(token_id: Annotated[str, typer.Argument(help="The token's ID (from `list`).")]) -> None:
    """Revoke a token: requests with it are refused from now on."""
    record = run(tokens.revoke_token(settings=get_settings(), token_id=token_id))
    typer.echo(f"token {record.token_id} ({record.name}) is revoked")
