"""``persyn send`` and ``persyn chat``: the terminal channel.

The operator's lines become inbound events on the ``terminal`` service; the speaker is the OS
user unless ``--as`` says otherwise. Replies, silence (with the agent's reason) and failures are
shown as distinct notices. ``chat`` streams the draft as it is generated when the terminal is
interactive, and shows messages the agent sends unprompted as they arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import sys
from typing import Annotated

import psycopg
import typer

from activities.channels.stream import libpq_dsn, stream_channel
from cli import delivery
from cli.common import UserError, echo_err, friendly_errors, run
from cli.console import Console
from schemas.events import ChannelRef, InboundEvent, Outcome, Receipt, Speaker
from schemas.ids import check_handle, check_ulid, new_ulid
from schemas.settings import Settings, get_settings
from store.db import Database
from store.queries.agents import get_agent
from store.queries.runtime import OUTBOX_CHANNEL
from store.tables import OutboxRow
from temporal.client import connect
from workers.health import serving

AgentOpt = Annotated[str, typer.Option("--agent", "-a", help="The agent's handle.")]
AsOpt = Annotated[
    str | None, typer.Option("--as", help="Speak as this identity (default: the OS user).")
]
ChannelOpt = Annotated[str, typer.Option("--channel", help="Terminal channel name.")]


EXIT_CODES = {Outcome.FAILED: 1, Outcome.DEGRADED: 3}
"""``persyn send``'s exit status by outcome; spoke and silent exit 0 (2 is a usage error)."""


def _speaker(as_: str | None) -> Speaker:
    name = as_ or getpass.getuser()
    return Speaker(speaker_id=name, display_name=name)


async def _agent_name(settings: Settings, handle: str) -> str:
    check_handle(handle)
    db = Database(settings.database_dsn())
    try:
        async with db.session() as session:
            agent = await get_agent(session, handle=handle)
    finally:
        await db.aclose()
    if agent is None:
        raise UserError(f"there is no agent {handle!r}: create it with `persyn agent create`")
    return agent.name


def render(receipt: Receipt, name: str) -> str:
    """A receipt as the terminal shows it."""
    marker = receipt.marker
    if marker is None:
        return f"[{name} accepted the message]"
    if marker.outcome is Outcome.SPOKE:
        return f"{name}> {marker.text}"
    if marker.outcome is Outcome.DEGRADED:
        return f"{name}> {marker.text}\n[degraded: {marker.reason}]"
    if marker.outcome is Outcome.SILENT:
        return f"[{name} chose not to reply: {marker.reason}]"
    return f"[error: {marker.reason}]"


async def _send(settings: Settings, handle: str, event: InboundEvent) -> tuple[Receipt, str]:
    name = await _agent_name(settings, handle)
    # Named before Temporal sees it: whatever happens next, resending this ID is safe.
    echo_err(f"event-id {event.event_id}")
    client = await delivery.connect_for(settings, event.event_id)
    receipt = await delivery.submit(client, settings, handle=handle, event=event)
    return receipt, name


@friendly_errors
def send(
    text: Annotated[str, typer.Argument(help="What to say ('-' reads standard input).")],
    agent: AgentOpt,
    as_: AsOpt = None,
    channel: ChannelOpt = "console",
    event_id: Annotated[
        str | None, typer.Option(help="Idempotency key (a ULID); resending it replies once.")
    ] = None,
    conversation: Annotated[
        str | None, typer.Option(help="Continue this open conversation (a ULID).")
    ] = None,
    not_addressed: Annotated[
        bool, typer.Option("--not-addressed", help="Observed traffic, not addressed to the agent.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the receipt as JSON.")] = False,
) -> None:
    """Send one message and print the reply (or the agent's reason for silence).

    Exit status: 0 when the agent replied or chose silence, 1 when the turn failed, 3 when the
    reply is the safe fallback because the model provider failed (marked "degraded").
    """
    if text == "-":
        raw = sys.stdin.buffer.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError("standard input is not valid UTF-8: re-encode it as UTF-8") from None
    event = InboundEvent(
        event_id=check_ulid(event_id, what="event id") if event_id else new_ulid(),
        channel=ChannelRef(service="terminal", channel=channel),
        speaker=_speaker(as_),
        text=text,
        addressed=not not_addressed,
        conversation_id=check_ulid(conversation, what="conversation id") if conversation else None,
    )
    receipt, name = run(_send(get_settings(), agent, event))
    if as_json:
        typer.echo(json.dumps(receipt.model_dump(mode="json"), indent=2))
    else:
        typer.echo(render(receipt, name))
    if receipt.marker is not None and receipt.marker.outcome in EXIT_CODES:
        raise typer.Exit(EXIT_CODES[receipt.marker.outcome])


async def _listen(
    dsn: str, channels: list[str], on_message: dict[str, object], stop: asyncio.Event
) -> None:
    """LISTEN on ``channels``, dispatching payloads to ``on_message[channel]`` until ``stop``."""
    async with await psycopg.AsyncConnection.connect(libpq_dsn(dsn), autocommit=True) as conn:
        for channel in channels:
            await conn.execute(f'LISTEN "{channel}"')
        gen = conn.notifies()
        while not stop.is_set():
            notify_task = asyncio.ensure_future(anext(gen))
            stop_task = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait(
                {notify_task, stop_task}, return_when=asyncio.FIRST_COMPLETED
            )
            stop_task.cancel()
            if notify_task not in done:
                notify_task.cancel()
                break
            notice = notify_task.result()
            handler = on_message.get(notice.channel)
            if callable(handler):
                handler(json.loads(notice.payload))


async def _chat(settings: Settings, handle: str, speaker: Speaker, channel: str) -> None:
    name = await _agent_name(settings, handle)
    delivery.quiet_sdk_logs()
    client = await connect(settings)
    console = Console(name, live=sys.stdout.isatty())
    channel_key = f"terminal:{channel}"
    db = Database(settings.database_dsn())

    pending: set[asyncio.Future[None]] = set()

    def on_outbox(payload: object) -> None:
        if not isinstance(payload, dict) or payload.get("agent") != handle:
            return
        if payload.get("channel") != channel_key:
            return
        task = asyncio.ensure_future(_show_unprompted(db, str(payload.get("id")), console))
        pending.add(task)
        task.add_done_callback(pending.discard)

    stop_outbox = asyncio.Event()
    outbox_task = asyncio.create_task(
        _listen(settings.database_dsn(), [OUTBOX_CHANNEL], {OUTBOX_CHANNEL: on_outbox}, stop_outbox)
    )
    print(f"talking with {name} as {speaker.speaker_id} on terminal:{channel} (Ctrl-D to leave)")
    if not await serving(settings, client):
        console.commit(f"[{delivery.no_worker(settings)}; messages wait until a worker serves]")
    try:
        while True:
            try:
                line = await asyncio.to_thread(input, "you> ")
            except EOFError:
                print()
                break
            if not line.strip():
                continue
            if line.strip() in {"/quit", "/exit"}:
                break
            try:
                event = InboundEvent(
                    event_id=new_ulid(),
                    channel=ChannelRef(service="terminal", channel=channel),
                    speaker=speaker,
                    text=line,
                    stream=console.live,
                )
            except ValueError as err:
                console.commit(f"[not sent: {_reason(err)}]")
                continue
            stop_stream = asyncio.Event()
            key = stream_channel(event.event_id)
            stream_task = asyncio.create_task(
                _listen(
                    settings.database_dsn(),
                    [key],
                    {
                        key: lambda p: (
                            console.delta(str(p.get("text", ""))) if isinstance(p, dict) else None
                        )
                    },
                    stop_stream,
                )
            )
            try:
                receipt = await delivery.submit(
                    client,
                    settings,
                    handle=handle,
                    event=event,
                    on_no_worker=lambda line: console.commit(f"[{line}; the message waits]"),
                )
            except Exception as err:  # shown, then the chat goes on
                console.commit(f"[error: {str(err).splitlines()[0]}]")
                continue
            finally:
                stop_stream.set()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(stream_task, 2)
            console.commit(render(receipt, name))
    finally:
        stop_outbox.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(outbox_task, 2)
        await db.aclose()


async def _show_unprompted(db: Database, message_id: str, console: Console) -> None:
    """Print an outbox message if the agent sent it on its own (replies are already shown)."""
    async with db.session() as session:
        row = await session.get(OutboxRow, message_id)
    if row is not None and row.unprompted:
        console.commit(f"{console.name} (unprompted)> {row.text}")


def _reason(err: ValueError) -> str:
    errors = getattr(err, "errors", None)
    if callable(errors) and errors():
        return str(errors()[0].get("msg", err)).removeprefix("Value error, ")
    return str(err)


@friendly_errors
def chat(agent: AgentOpt, as_: AsOpt = None, channel: ChannelOpt = "console") -> None:
    """Talk with an agent in the terminal."""
    settings = get_settings()
    run(_chat(settings, agent, _speaker(as_), channel))
