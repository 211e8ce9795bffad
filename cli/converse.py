"""``persyn converse``: two agents talk, for operators and tests (spec §4.5).

The first agent's opening is delivered to the second as from the first; from there each answers
the other through its ordinary pipeline, paced by the channel settings, until one has nothing
to add or a channel's budget or turn limit is spent. With ``--wait`` the command follows the
exchange live and says why it stopped; without, it returns once the opening is queued (follow
it later with ``persyn inbox``).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from cli.common import friendly_errors, run
from schemas.ids import check_handle
from schemas.settings import Settings, get_settings
from usecases.peers import ExchangeEvent, StopReason, follow_conversation, start_conversation
from usecases.submission import connect_client

EXIT_CODES = {StopReason.FAILED: 2, StopReason.TIMEOUT: 3}
"""Exit status when the conversation did not end on its own (silence and pacing exit 0)."""


def _say(event: ExchangeEvent, as_json: bool) -> None:
    if as_json:
        record = {
            "from": event.sender,
            "to": event.recipient,
            "id": event.message_id,
            "text": event.text,
            "stopped": event.stopped.value if event.stopped else None,
            "reason": event.reason,
        }
        typer.echo(json.dumps(record, ensure_ascii=False))
    elif event.stopped is None:
        typer.echo(f"{event.sender} -> {event.recipient}: {event.text}")
    elif event.stopped is StopReason.SILENCE:
        typer.echo(f"[stopped: {event.sender} stayed silent: {event.reason}]")
    else:
        typer.echo(f"[stopped ({event.stopped.value}): {event.reason}]")


async def _converse(
    settings: Settings,
    first: str,
    second: str,
    opening: str,
    max_turns: int | None,
    wait: bool,
    timeout: float,
    as_json: bool,
) -> StopReason | None:
    client = await connect_client(settings=settings)
    opening_id = await start_conversation(
        settings=settings,
        client=client,
        first=first,
        second=second,
        opening=opening,
        max_turns=max_turns,
    )
    if not wait:
        typer.echo(f"opening {opening_id} queued from {first} to {second}")
        return None
    stopped = None
    async for event in follow_conversation(
        settings=settings, opening_id=opening_id, timeout=timeout
    ):
        _say(event, as_json)
        stopped = event.stopped
    return stopped


@friendly_errors
def converse(
    first: Annotated[str, typer.Argument(help="The agent that opens.")],
    second: Annotated[str, typer.Argument(help="The agent it speaks to.")],
    opening: Annotated[str, typer.Option(help="The first message, as the first agent says it.")],
    max_turns: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Store a turn limit on both agents' channels: together at most this many "
            "messages per pacing window (stays until changed).",
        ),
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow the conversation until it stops.")
    ] = False,
    timeout: Annotated[
        float, typer.Option(min=1, help="Stop following after this many seconds.")
    ] = 600.0,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """Start a conversation between two agents; with --wait, follow it until it stops."""
    check_handle(first)
    check_handle(second)
    stopped = run(
        _converse(get_settings(), first, second, opening, max_turns, wait, timeout, as_json)
    )
    if stopped in EXIT_CODES:
        raise typer.Exit(EXIT_CODES[stopped])
