"""``persyn inbox``: messages an agent sent on its own initiative, for scripts and operators.

``persyn chat`` shows such messages live on its channel; this lists them after the fact, on
every channel, oldest first (``--json`` for scripts, one object per message).
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
from store.queries.agents import get_agent
from store.queries.contacts import unprompted_messages
from store.tables import OutboxRow
from usecases.store import open_store


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


async def _messages(
    handle: str, since: datetime | None, channel: str | None, limit: int
) -> list[OutboxRow]:
    async with open_store(get_settings()) as db, db.session() as session:
        if await get_agent(session, handle=handle) is None:
            raise UserError(f"there is no agent {handle!r}: see `persyn agent list`")
        return await unprompted_messages(
            session, agent=handle, since=since, channel_key=channel, limit=limit
        )


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
) -> None:
    """Messages the agent sent unprompted (from reminders, heartbeats, its own goals)."""
    check_handle(agent)
    rows = run(_messages(agent, _since(since), channel, limit))
    for row in rows:
        if as_json:
            record = {
                "id": row.id,
                "agent": row.agent,
                "channel": row.channel_key,
                "conversation_id": row.conversation_id,
                "text": row.text,
                "created_at": row.created_at.isoformat(),
            }
            typer.echo(json.dumps(record, ensure_ascii=False))
        else:
            typer.echo(f"{row.created_at:%Y-%m-%d %H:%M} {row.channel_key} {row.id}\n  {row.text}")
    if not rows and not as_json:
        typer.echo(f"no unprompted messages from {agent}")
