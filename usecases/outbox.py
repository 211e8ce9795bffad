"""What the agent sent and where each message stands: the inbox any channel can list."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from schemas.settings import Settings
from store.queries.agents import get_agent
from store.queries.delivery import inbox_messages
from usecases.errors import UnknownAgentError
from usecases.store import open_store


@dataclass(frozen=True)
class SentMessage:
    """One outbox message with its delivery state."""

    message_id: str
    agent: str
    channel: str
    conversation_id: str | None
    text: str
    unprompted: bool
    created_at: datetime
    status: str
    attempts: int
    last_error: str | None
    delivered_at: datetime | None


async def sent_messages(
    *,
    settings: Settings,
    agent: str,
    since: datetime | None = None,
    channel: str | None = None,
    failed_only: bool = False,
    limit: int = 50,
) -> list[SentMessage]:
    """Unprompted messages and undelivered ones (``failed_only``: only those), oldest first.

    Raises:
        UnknownAgentError: No agent has this handle.
    """
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        if await get_agent(session, handle=agent) is None:
            raise UnknownAgentError(agent)
        rows = await inbox_messages(
            session,
            agent=agent,
            since=since,
            channel_key=channel,
            failed_only=failed_only,
            limit=limit,
        )
    return [
        SentMessage(
            message_id=row.id,
            agent=row.agent,
            channel=row.channel_key,
            conversation_id=row.conversation_id,
            text=row.text,
            unprompted=row.unprompted,
            created_at=row.created_at,
            status=row.status,
            attempts=row.attempts,
            last_error=row.last_error,
            delivered_at=row.delivered_at,
        )
        for row in rows
    ]
