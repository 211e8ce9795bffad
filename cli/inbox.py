"""``persyn inbox``: what an agent sent on its own initiative, and where each message stands.

``persyn chat`` shows such messages live on its channel (and those kept while nobody was
there); this lists them after the fact, on every channel, oldest first, each with its delivery
state: delivered, kept for pickup, pending, failed or blocked (with the reason). A reply whose
delivery failed is listed too; ``--failed`` lists only undelivered messages. ``--json`` for
scripts, one object per message.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated

import typer
from ulid import ULID

from cli.common import UserError, friendly_errors, run
from schemas.ids import check_handle, is_ulid
from schemas.settings import get_settings
from usecases.outbox import SentMessage, sent_messages


def _since(value: str | None) -> datetime | None:
    """An ISO time or a message ID (the messages after it)."""
    if value is None:
        return None
    if is_ulid(value.upper()):
        return ULID.from_str(value.upper()).datetime
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise UserError(
            f"--since {value!r} is neither an ISO time (2026-11-30T09:00) nor a message ID"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


_FLAGS = {"failed": "FAILED", "blocked": "BLOCKED"}


def _line(message: SentMessage) -> str:
    kind = "" if message.unprompted else " reply"
    state = message.status.replace("_", " ")
    head = f"{message.created_at:%Y-%m-%d %H:%M} {message.channel} {message.message_id}{kind}"
    if message.status in _FLAGS:
        reason = f": {message.last_error}" if message.last_error else ""
        return f"{head} [{_FLAGS[message.status]}{reason}]\n  {message.text}"
    return f"{head} [{state}]\n  {message.text}"


@friendly_errors
def inbox(
    agent: Annotated[str, typer.Option("--agent", "-a", help="The agent's handle.")],
    since: Annotated[
        str | None, typer.Option(help="Only after this ISO time or message ID.")
    ] = None,
    channel: Annotated[
        str | None, typer.Option(help="Only this channel, e.g. 'terminal:console'.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many (newest).")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only messages whose delivery failed or was blocked.")
    ] = False,
) -> None:
    """Messages the agent sent unprompted, and any whose delivery failed, with their state."""
    check_handle(agent)
    messages = run(
        sent_messages(
            settings=get_settings(),
            agent=agent,
            since=_since(since),
            channel=channel,
            failed_only=failed,
            limit=limit,
        )
    )
    for message in messages:
        if as_json:
            record = {
                "id": message.message_id,
                "agent": message.agent,
                "channel": message.channel,
                "conversation_id": message.conversation_id,
                "text": message.text,
                "unprompted": message.unprompted,
                "created_at": message.created_at.isoformat(),
                "status": message.status,
                "attempts": message.attempts,
                "last_error": message.last_error,
                "delivered_at": message.delivered_at.isoformat() if message.delivered_at else None,
            }
            typer.echo(json.dumps(record, ensure_ascii=False))
        else:
            typer.echo(_line(message))
    if not messages and not as_json:
        typer.echo(
            f"no undelivered messages from {agent}"
            if failed
            else f"no unprompted messages from {agent}"
        )
