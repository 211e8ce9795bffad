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
import shlex
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated

import typer
from temporalio.client import Client

from cli import submission
from cli.common import UserError, echo_err, friendly_errors, run
from cli.console import Console
from schemas.events import ChannelRef, InboundEvent, Outcome, Receipt, Speaker
from schemas.ids import check_handle, check_ulid
from schemas.settings import Settings, get_settings
from temporal.client import connect
from usecases import agents, streams
from usecases.images import PictureRefusedError, check_picture_size, keep_sent_picture
from usecases.mind import describe as describe_mind
from usecases.recordings import (
    RecordingRefusedError,
    check_recording_size,
    keep_sent_recording,
)
from usecases.submission import build_event
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
    agent = await agents.find_agent(settings=settings, handle=handle)
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
    client = await submission.connect_for(settings, event.event_id)
    receipt = await submission.submit(client, settings, handle=handle, event=event)
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
    # Names as typed, not Path: a NUL in one is refused by the door in a line, not by Click.
    image: Annotated[
        list[str] | None,
        typer.Option(help="A picture to send with the message (PNG, JPEG or WebP); repeatable."),
    ] = None,
    audio: Annotated[
        list[str] | None,
        typer.Option(
            help="A recording to send with the message (Ogg, MP3, WAV, FLAC, M4A or WebM); "
            "repeatable."
        ),
    ] = None,
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
    settings = get_settings()
    pictures = run(_keep_pictures(settings, agent, [Path(name) for name in image or []]))
    recordings = run(_keep_recordings(settings, agent, [Path(name) for name in audio or []]))
    event = build_event(
        event_id=check_ulid(event_id, what="event id") if event_id else None,
        channel=ChannelRef(service="terminal", channel=channel),
        speaker=_speaker(as_),
        text=text,
        addressed=not not_addressed,
        conversation_id=check_ulid(conversation, what="conversation id") if conversation else None,
        images=pictures,
        recordings=recordings,
    )
    receipt, name = run(_send(settings, agent, event))
    if as_json:
        typer.echo(json.dumps(receipt.model_dump(mode="json"), indent=2))
    else:
        typer.echo(render(receipt, name))
    if receipt.marker is not None and receipt.marker.outcome in EXIT_CODES:
        raise typer.Exit(EXIT_CODES[receipt.marker.outcome])


async def _keep_pictures(settings: Settings, agent: str, files: list[Path]) -> list[str]:
    """Keep each picture where the agent's image tools find it; the IDs the event names."""
    kept: list[str] = []
    for file in files:
        try:
            content = await _read(file, lambda size: check_picture_size(size, settings))
            picture = await keep_sent_picture(settings=settings, agent=agent, content=content)
        except PictureRefusedError as err:
            raise UserError(f"{_shown(file)}: {err}") from None
        kept.append(picture.image_id)
    return kept


async def _keep_recordings(settings: Settings, agent: str, files: list[Path]) -> list[str]:
    """Keep each recording for transcription at admission; the IDs the event names."""
    kept: list[str] = []
    for file in files:
        try:
            content = await _read(file, lambda size: check_recording_size(size, settings))
            recording = await keep_sent_recording(settings=settings, agent=agent, content=content)
        except RecordingRefusedError as err:
            raise UserError(f"{_shown(file)}: {err}") from None
        kept.append(recording.audio_id)
    return kept


def _shown(file: Path) -> str:
    """A file's name as an error prints it: control characters escaped, on one line."""
    return repr(str(file))[1:-1]


async def _read(file: Path, check_size: Callable[[int], None]) -> bytes:
    """``file``'s bytes, its size checked first: a 50 MB file is refused before it is read."""
    try:
        check_size((await asyncio.to_thread(file.stat)).st_size)
        return await asyncio.to_thread(file.read_bytes)
    except (OSError, ValueError) as err:  # ValueError: a NUL in the name
        reason = getattr(err, "strerror", None) or str(err)
        raise UserError(f"cannot read {_shown(file)}: {reason}") from None


async def _show_each(texts: AsyncIterator[str], show: Callable[[str], None]) -> None:
    async for text in texts:
        show(text)


async def _stopped(task: asyncio.Task[None]) -> None:
    """End a live stream: it is presentation only, so whatever it was doing is dropped."""
    task.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(task, 2)


async def _chat(settings: Settings, handle: str, speaker: Speaker, channel: str) -> None:
    name = await _agent_name(settings, handle)
    submission.quiet_sdk_logs()
    client = await connect(settings)
    console = Console(name, live=sys.stdout.isatty())
    here = ChannelRef(service="terminal", channel=channel)
    async with streams.unprompted_messages(settings=settings, handle=handle, channel=here) as own:
        outbox_task = asyncio.create_task(
            _show_each(own, lambda text: console.commit(f"{name} (unprompted)> {text}"))
        )
        try:
            await _converse(settings, client, console, handle, speaker, here)
        finally:
            await _stopped(outbox_task)


async def _converse(
    settings: Settings,
    client: Client,
    console: Console,
    handle: str,
    speaker: Speaker,
    here: ChannelRef,
) -> None:
    name = console.name
    print(f"talking with {name} as {speaker.speaker_id} on {here.key} (Ctrl-D to leave)")
    print("send a picture or a recording with: /image PATH [words], /audio PATH [words]")
    print("\n".join(describe_mind(settings)))
    if not await serving(settings, client):
        console.commit(f"[{submission.no_worker(settings)}; messages wait until a worker serves]")
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
            text, images, recordings = await _with_media(settings, handle, line)
            event = build_event(
                channel=here,
                speaker=speaker,
                text=text,
                stream=console.live,
                images=images,
                recordings=recordings,
            )
        except UserError as err:
            console.commit(f"[not sent: {err}]")
            continue
        except ValueError as err:
            console.commit(f"[not sent: {_reason(err)}]")
            continue
        async with streams.token_deltas(settings=settings, event_id=event.event_id) as deltas:
            stream_task = asyncio.create_task(_show_each(deltas, console.delta))
            try:
                receipt = await submission.submit(
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
                await _stopped(stream_task)
        console.commit(render(receipt, name))


MEDIA_COMMANDS = {"/image": "(a picture)", "/audio": "(a recording)"}
"""Chat lines that send a file: the command, then its path, then any words (else these)."""


async def _with_media(
    settings: Settings, handle: str, line: str
) -> tuple[str, list[str], list[str]]:
    """A chat line's words and the media it sends (``/image PATH [words]``), kept first.

    Raises:
        UserError: The path cannot be read, or the file is refused (one line, naming why).
    """
    command, _, rest = line.strip().partition(" ")
    if command not in MEDIA_COMMANDS:
        return line, [], []
    try:
        parts = shlex.split(rest)
    except ValueError as err:
        raise UserError(f"{command} PATH [words]: {err}") from None
    if not parts:
        raise UserError(f"{command} needs a file: {command} PATH [words]")
    path, words = Path(parts[0]), " ".join(parts[1:]) or MEDIA_COMMANDS[command]
    if command == "/image":
        return words, await _keep_pictures(settings, handle, [path]), []
    return words, [], await _keep_recordings(settings, handle, [path])


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
