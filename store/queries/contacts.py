"""The contact directory as the agent's tools see it, and unprompted messages to contacts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import SELF_SERVICE
from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef
from schemas.fences import without_fence_tags
from store.lane import Lane
from store.queries.dialog import record_turn
from store.queries.runtime import add_outbox
from store.tables import Channel, Conversation, DialogTurnRow, Identity, Person


@dataclass(frozen=True)
class Contact:
    """A person the agent can reach."""

    person_id: str
    name: str
    preferred_channel: str | None


async def find_contacts(session: AsyncSession, *, agent: str, who: str) -> list[Contact]:
    """People matching ``who``: their ID, their name (any case) or a speaker ID of theirs.

    The agent's own self-channel identities are never contacts.
    """
    needle = who.strip()
    by_identity = select(Identity.person_id).where(
        Identity.agent == agent,
        Identity.service != SELF_SERVICE,
        func.lower(Identity.speaker_id) == needle.lower(),
    )
    reachable = select(Identity.person_id).where(
        Identity.agent == agent, Identity.service != SELF_SERVICE
    )
    rows = await session.exec(
        select(Person)
        .where(
            Person.agent == agent,
            col(Person.id).in_(reachable),
            or_(
                col(Person.id) == needle.upper(),
                func.lower(Person.display_name) == needle.lower(),
                col(Person.id).in_(by_identity),
            ),
        )
        .order_by(col(Person.last_seen_at).desc())
    )
    return [Contact(p.id, p.display_name, p.preferred_channel) for p in rows]


async def known_contacts(session: AsyncSession, *, agent: str, limit: int = 20) -> list[str]:
    """Names of the people the agent met most recently (for a helpful error)."""
    reachable = select(Identity.person_id).where(
        Identity.agent == agent, Identity.service != SELF_SERVICE
    )
    rows = await session.exec(
        select(Person.display_name)
        .where(Person.agent == agent, col(Person.id).in_(reachable))
        .order_by(col(Person.last_seen_at).desc())
        .limit(limit)
    )
    return list(rows)


async def last_channel(session: AsyncSession, *, agent: str, person_id: str) -> ChannelRef | None:
    """The channel most recently used with the person: where they last spoke, else an identity."""
    spoke = (
        await session.exec(
            select(Channel)
            .join(DialogTurnRow, col(DialogTurnRow.channel_id) == col(Channel.id))
            .where(
                DialogTurnRow.agent == agent,
                DialogTurnRow.person_id == person_id,
                Channel.service != SELF_SERVICE,
            )
            .order_by(col(DialogTurnRow.at).desc())
            .limit(1)
        )
    ).first()
    if spoke is not None:
        return ChannelRef(service=spoke.service, channel=spoke.channel)
    identity = (
        await session.exec(
            select(Identity)
            .where(Identity.person_id == person_id, Identity.service != SELF_SERVICE)
            .order_by(col(Identity.created_at).desc())
            .limit(1)
        )
    ).first()
    if identity is None:
        return None
    return ChannelRef(service=identity.service, channel=identity.channel)


async def send_unprompted(
    session: AsyncSession,
    *,
    message_id: str,
    agent: str,
    agent_name: str,
    channel: ChannelRef,
    text: str,
    at: datetime,
) -> tuple[str | None, bool]:
    """Queue an unprompted message on ``channel`` once per ``message_id``.

    The message joins the channel's latest conversation in the stored dialog (search and
    consolidation see it) and the outbox, which NOTIFYs listening consoles.

    Returns:
        The conversation it joined (``None`` if the channel never had one) and whether it was
        queued now (``False``: a retry found it already sent).
    """
    # Every unprompted message passes here: a model's echo of fence markup goes no further.
    text = without_fence_tags(text)
    conversation = (
        await session.exec(
            select(Conversation.id)
            .join(Channel, col(Channel.id) == col(Conversation.channel_id))
            .where(Conversation.agent == agent, Channel.key == channel.key)
            .order_by(col(Conversation.id).desc())
            .limit(1)
        )
    ).first()
    if conversation is not None:
        turn = DialogTurn(
            turn_id=message_id,
            conversation_id=conversation,
            role=Role.AGENT,
            speaker_id=agent,
            speaker_name=agent_name,
            text=text,
            at=at,
        )
        await record_turn(session, agent=agent, channel=channel, turn=turn)
    # The outbox is keyed once per sending act; the message's own ID stands in for it.
    queued = await add_outbox(
        session,
        message_id=message_id,
        activation_id=message_id,
        agent=agent,
        channel_key=channel.key,
        conversation_id=conversation,
        text_=text,
        created_at=at,
        unprompted=True,
    )
    return conversation, queued


_DELIVERED = """
    SELECT text FROM outbox
     WHERE agent = %(agent)s AND channel_key = %(channel_key)s AND unprompted
       AND created_at > %(since)s AND starts_with(text, %(prefix)s)
     ORDER BY created_at DESC
     LIMIT %(limit)s
"""


async def delivered_texts(
    lane: Lane, *, agent: str, channel_key: str, since: datetime, prefix: str, limit: int
) -> list[str]:
    """Unprompted messages of one kind on a channel: the newest ``limit``, newest first.

    The kind is told by the text's ``prefix`` (a sandbox report, a finished render); only
    messages after ``since`` count. On the lane: every prompt asks.
    """
    params = {
        "agent": agent,
        "channel_key": channel_key,
        "since": since,
        "prefix": prefix,
        "limit": limit,
    }
    return [row["text"] for row in await lane.rows(_DELIVERED, params)]
