"""``persyn contacts list|show|rename|attach|detach|prefer|fold``: curating who an agent knows.

People are created when they first speak (spec §4.5); the operator corrects the directory:
renames a contact, attaches an identity or an address, detaches an identity (later traffic
on it is a new person, history stays), sets the preferred channel, and folds two records
that are one human into one, retroactively.
"""

from __future__ import annotations

import getpass
import json
from typing import Annotated

import typer

from cli.common import echo_err, friendly_errors, run
from schemas.contacts import ContactError, ContactRecord, address_kind, channel_key
from schemas.settings import get_settings
from usecases import contacts

app = typer.Typer(
    help="List and curate the people an agent knows: rename, attach, detach, prefer, fold.",
    no_args_is_help=True,
)
AgentOpt = Annotated[str, typer.Option("--agent", "-a", help="The agent's handle.")]
WhoArg = Annotated[str, typer.Argument(help="The contact: their ID, name or a speaker ID.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
AddressOpt = Annotated[
    str | None, typer.Option("--address", help="An address as type=value, e.g. email=a@b.org.")
]


def _address(value: str) -> tuple[str, str]:
    kind, sep, address = value.partition("=")
    if not sep or not address.strip():
        raise ContactError(f"{value[:80]!r} is not an address: write it as type=value")
    return address_kind(kind.strip()), address.strip()


def _print(record: ContactRecord, as_json: bool) -> None:
    if as_json:
        typer.echo(record.model_dump_json(indent=2))
        return
    typer.echo(f"contact:   {record.name} ({record.person_id})")
    typer.echo(f"met:       {record.first_met:%Y-%m-%d %H:%M} UTC")
    typer.echo(f"last seen: {record.last_interaction:%Y-%m-%d %H:%M} UTC")
    typer.echo(f"prefers:   {record.preferred_channel or '(most recently used channel)'}")
    for identity in record.identities:
        typer.echo(f"identity:  {identity.service}:{identity.channel}  {identity.speaker_id}")
    for address in record.addresses:
        typer.echo(f"address:   {address.kind}  {address.address}")


@app.command("list")
@friendly_errors
def list_(agent: AgentOpt, as_json: JsonOpt = False) -> None:
    """Everyone the agent has met, most recent first."""
    found = run(contacts.list_contacts(settings=get_settings(), agent=agent))
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in found], indent=2))
    elif not found:
        typer.echo("no contacts")
    for record in [] if as_json else found:
        ways = ", ".join(f"{i.service}:{i.channel}/{i.speaker_id}" for i in record.identities)
        typer.echo(
            f"{record.person_id}  {record.name[:32]:<32}  "
            f"{record.last_interaction:%Y-%m-%d %H:%M}  {ways or '(no identities)'}"
        )


@app.command()
@friendly_errors
def show(agent: AgentOpt, who: WhoArg, as_json: JsonOpt = False) -> None:
    """One contact: identities, addresses, last interaction, preferred channel."""
    _print(run(contacts.show_contact(settings=get_settings(), agent=agent, who=who)), as_json)


@app.command()
@friendly_errors
def rename(
    agent: AgentOpt, who: WhoArg, name: Annotated[str, typer.Argument(help="The new name.")]
) -> None:
    """Name a contact; a channel's name for them no longer replaces it."""
    record = run(contacts.rename_contact(settings=get_settings(), agent=agent, who=who, name=name))
    typer.echo(f"renamed {record.person_id} to {record.name}")


@app.command()
@friendly_errors
def attach(
    agent: AgentOpt,
    who: WhoArg,
    channel: Annotated[
        str | None, typer.Argument(help="The identity's channel, service:channel.")
    ] = None,
    speaker: Annotated[str | None, typer.Argument(help="Their speaker ID there.")] = None,
    address: AddressOpt = None,
) -> None:
    """Attach an identity (CHANNEL SPEAKER) or an address (--address type=value) to a contact."""
    if address is not None and channel is None:
        kind, value = _address(address)
        record = run(
            contacts.attach_address(
                settings=get_settings(), agent=agent, who=who, kind=kind, address=value
            )
        )
        typer.echo(f"{record.name} ({record.person_id}) has {kind} address {value}")
        return
    if channel is None or speaker is None or address is not None:
        raise ContactError("give either CHANNEL and SPEAKER, or --address type=value")
    ref = channel_key(channel)
    record = run(
        contacts.attach_identity(
            settings=get_settings(), agent=agent, who=who, channel=ref, speaker_id=speaker
        )
    )
    typer.echo(f"{speaker} on {ref.key} is now {record.name} ({record.person_id})")


@app.command()
@friendly_errors
def detach(
    agent: AgentOpt,
    channel: Annotated[str, typer.Argument(help="The identity's channel, service:channel.")],
    speaker: Annotated[
        str | None, typer.Argument(help="The speaker ID to detach (omit with --address).")
    ] = None,
    address: AddressOpt = None,
) -> None:
    """Detach an identity: later traffic on it is a new person; history stays where it formed.

    With --address, CHANNEL names the contact instead and the address is forgotten.
    """
    if address is not None:
        kind, value = _address(address)
        record = run(
            contacts.detach_address(
                settings=get_settings(), agent=agent, who=channel, kind=kind, address=value
            )
        )
        typer.echo(f"{record.name} ({record.person_id}) no longer has {kind} address {value}")
        return
    if speaker is None:
        raise ContactError("give the SPEAKER ID to detach from that channel")
    ref = channel_key(channel)
    name = run(
        contacts.detach_identity(
            settings=get_settings(), agent=agent, channel=ref, speaker_id=speaker
        )
    )
    typer.echo(f"detached {speaker} on {ref.key} from {name}; their next message starts anew")


@app.command()
@friendly_errors
def prefer(
    agent: AgentOpt,
    who: WhoArg,
    channel: Annotated[
        str | None, typer.Argument(help="service:channel; omit to use the most recent.")
    ] = None,
) -> None:
    """Set the channel the agent reaches a contact on (it must be one of theirs)."""
    ref = channel_key(channel) if channel is not None else None
    record = run(
        contacts.prefer_channel(settings=get_settings(), agent=agent, who=who, channel=ref)
    )
    typer.echo(
        f"{record.name} is reached on {record.preferred_channel or 'the most recent channel'}"
    )


@app.command()
@friendly_errors
def fold(
    agent: AgentOpt,
    folded: Annotated[str, typer.Argument(help="The record that goes.")],
    survivor: Annotated[str, typer.Argument(help="The record that stays.")],
    name: Annotated[
        str | None, typer.Option("--name", help="The name it keeps (default: the survivor's).")
    ] = None,
    by: Annotated[
        str | None, typer.Option("--by", help="Who is folding, for the audit (default: you).")
    ] = None,
) -> None:
    """Fold one contact into another, retroactively: identities, addresses, dialog, memories."""
    folding = contacts.fold_contacts(
        settings=get_settings(),
        agent=agent,
        folded=folded,
        survivor=survivor,
        name=name,
        by=by or getpass.getuser(),
    )
    outcome = run(folding)
    if outcome.warning:
        echo_err(f"warning: {outcome.warning}")
    result = outcome.result
    moved = sum(result.moved.values())
    typer.echo(
        f"folded {result.folded} into {result.survivor} as {result.name}: {moved} rows moved"
    )
