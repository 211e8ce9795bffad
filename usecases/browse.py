"""Browsing what an agent knows, read-only: its conversations on a channel, and their dialog.

People, facts, channels and memories have their own use cases (``contacts``, ``people``,
``channels``, ``memory``); what a browser adds is the conversations of each channel and the
verbatim dialog of one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.dialog import DialogTurn
from schemas.ids import check_ulid
from schemas.settings import Settings
from store.queries.browse import agents_conversation, conversations_on
from store.queries.dialog import conversation_turns
from usecases.directory import in_agent
from usecases.errors import UseCaseError


class NoSuchConversationError(UseCaseError):
    """The conversation does not exist, or is another agent's."""


@dataclass(frozen=True)
class ConversationSummary:
    """One conversation as a list shows it."""

    conversation_id: str
    status: str
    opened_at: datetime
    closed_at: datetime | None
    turns: int


async def channel_conversations(
    *, settings: Settings, agent: str, channel_key: str
) -> list[ConversationSummary]:
    """The agent's conversations on ``channel_key``, newest first.

    Raises:
        UnknownAgentError: no such agent.
    """
    rows = await in_agent(
        settings, agent, lambda s: conversations_on(s, agent=agent, channel_key=channel_key)
    )
    return [
        ConversationSummary(
            conversation_id=row.id,
            status=row.status,
            opened_at=row.opened_at,
            closed_at=row.closed_at,
            turns=row.turns,
        )
        for row in rows
    ]


async def conversation_dialog(
    *, settings: Settings, agent: str, conversation_id: str
) -> list[DialogTurn]:
    """The verbatim dialog of one of the agent's conversations, in the order it was said.

    Raises:
        InvalidIdError: ``conversation_id`` is not a ULID.
        UnknownAgentError: no such agent.
        NoSuchConversationError: it is not one of the agent's conversations.
    """
    wanted = check_ulid(conversation_id, what="conversation id")

    async def act(session: AsyncSession) -> list[DialogTurn]:
        found = await agents_conversation(session, agent=agent, conversation_id=wanted)
        if found is None:
            raise NoSuchConversationError(f"conversation {wanted} is not one of {agent}'s")
        return await conversation_turns(session, conversation_id=wanted)

    return await in_agent(settings, agent, act)
