"""People, identities and channels: resolve who is speaking, and where."""

from __future__ import annotations

from datetime import datetime
from typing import LiteralString

from sqlalchemy import func, text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.events import ChannelRef, Speaker
from schemas.ids import new_ulid
from schemas.records import ResolvedSpeaker
from store.sql import Reader, in_session
from store.tables import Channel, Identity, Person


async def ensure_channel(
    session: AsyncSession, *, agent: str, channel: ChannelRef, seen_at: datetime
) -> str:
    """The ID of the agent's channel row for ``channel``, creating it on first use."""
    stmt = (
        insert(Channel)
        .values(
            id=new_ulid(),
            agent=agent,
            key=channel.key,
            service=channel.service,
            channel=channel.channel,
            created_at=seen_at,
            last_active_at=seen_at,
        )
        .on_conflict_do_update(
            constraint="uq_channel_key",
            # Older traffic (an import, a late retry) never moves the clock backwards.
            set_={"last_active_at": func.greatest(Channel.__table__.c.last_active_at, seen_at)},  # type: ignore[attr-defined]
        )
        .returning(Channel.__table__.c.id)  # type: ignore[attr-defined]
    )
    result = await session.exec(stmt)
    return str(result.scalar_one())


_KNOWN_SPEAKER: LiteralString = """
    WITH known AS (
        UPDATE people AS p
           SET last_seen_at = GREATEST(p.last_seen_at, CAST(%(seen_at)s AS timestamptz)),
               display_name = CASE WHEN p.name_curated THEN p.display_name
                                   ELSE COALESCE(CAST(%(display_name)s AS varchar), p.display_name)
                              END
          FROM identities AS i
         WHERE i.agent = %(agent)s AND i.service = %(service)s AND i.channel = %(channel)s
           AND i.speaker_id = %(speaker_id)s AND p.id = i.person_id
        RETURNING p.id, p.display_name
    ), touched AS (
        INSERT INTO channels (id, agent, key, service, channel, created_at, last_active_at,
                              last_person_id)
        SELECT CAST(%(id)s AS varchar), CAST(%(agent)s AS varchar), CAST(%(key)s AS varchar),
               CAST(%(service)s AS varchar), CAST(%(channel)s AS varchar),
               CAST(%(seen_at)s AS timestamptz), CAST(%(seen_at)s AS timestamptz), k.id
          FROM known AS k
        ON CONFLICT ON CONSTRAINT uq_channel_key
        DO UPDATE SET last_active_at = GREATEST(channels.last_active_at,
                                                EXCLUDED.last_active_at),
                      last_person_id = CASE
                          WHEN EXCLUDED.last_active_at >= channels.last_active_at
                          THEN EXCLUDED.last_person_id ELSE channels.last_person_id END
    )
    SELECT id, display_name FROM known
    """
"""A known speaker: their person touched and the channel's activity recorded, in one statement."""

_TOUCH_CHANNEL = text(
    """
    INSERT INTO channels (id, agent, key, service, channel, created_at, last_active_at,
                          last_person_id)
    VALUES (:id, :agent, :key, :service, :channel, :seen_at, :seen_at, :person_id)
    ON CONFLICT ON CONSTRAINT uq_channel_key
    DO UPDATE SET last_active_at = GREATEST(channels.last_active_at, EXCLUDED.last_active_at),
                  last_person_id = CASE
                      WHEN EXCLUDED.last_active_at >= channels.last_active_at
                      THEN EXCLUDED.last_person_id ELSE channels.last_person_id END
    """
)


async def known_speaker(
    read: Reader,
    *,
    agent: str,
    channel: ChannelRef,
    speaker: Speaker,
    seen_at: datetime,
) -> ResolvedSpeaker | None:
    """The person behind a speaker already known, touched as seen; ``None`` for a stranger.

    One statement, atomic on its own: it refreshes the person's last-seen time and name and
    the channel's last activity. ``read`` runs it: the driver lane's (nearly every message),
    or a session's inside its transaction (:func:`store.sql.in_session`).
    """
    rows = await read(
        _KNOWN_SPEAKER,
        {
            "id": new_ulid(),
            "agent": agent,
            "key": channel.key,
            "service": channel.service,
            "channel": channel.channel,
            "speaker_id": speaker.speaker_id,
            "seen_at": seen_at,
            "display_name": speaker.display_name,
        },
    )
    if not rows:
        return None
    known = rows[0]
    return ResolvedSpeaker(
        person_id=str(known["id"]), person_name=str(known["display_name"]), created=False
    )


async def resolve_speaker(
    session: AsyncSession,
    *,
    agent: str,
    channel: ChannelRef,
    speaker: Speaker,
    seen_at: datetime,
) -> ResolvedSpeaker:
    """Find the person behind ``speaker`` by service + channel + speaker id, or create one.

    Records are created automatically on first contact (spec §4.5). A display name the
    channel supplies refreshes the person's name, unless the operator named them. A known
    speaker costs one statement (:func:`known_speaker`).
    """
    known = await known_speaker(
        in_session(session), agent=agent, channel=channel, speaker=speaker, seen_at=seen_at
    )
    if known is not None:
        await session.commit()
        return known
    person_id, name = await _first_contact(
        session, agent=agent, speaker=speaker, channel=channel, seen_at=seen_at
    )
    if person_id is None:
        # Another worker created the identity first: use its person.
        await session.rollback()
        return await resolve_speaker(
            session, agent=agent, channel=channel, speaker=speaker, seen_at=seen_at
        )
    connection = await session.connection()
    await connection.execute(
        _TOUCH_CHANNEL,
        {
            "id": new_ulid(),
            "agent": agent,
            "key": channel.key,
            "service": channel.service,
            "channel": channel.channel,
            "seen_at": seen_at,
            "person_id": person_id,
        },
    )
    await session.commit()
    return ResolvedSpeaker(person_id=person_id, person_name=name, created=True)


async def _first_contact(
    session: AsyncSession,
    *,
    agent: str,
    speaker: Speaker,
    channel: ChannelRef,
    seen_at: datetime,
) -> tuple[str | None, str]:
    """Create the person and identity; ``(None, ...)`` if another worker won the race."""
    person_id = new_ulid()
    name = speaker.display_name or speaker.speaker_id
    session.add(
        Person(
            id=person_id,
            agent=agent,
            display_name=name,
            created_at=seen_at,
            last_seen_at=seen_at,
            preferred_channel=None,
        )
    )
    await session.flush()
    inserted = await session.exec(
        insert(Identity)
        .values(
            id=new_ulid(),
            agent=agent,
            person_id=person_id,
            service=channel.service,
            channel=channel.channel,
            speaker_id=speaker.speaker_id,
            created_at=seen_at,
        )
        .on_conflict_do_nothing(constraint="uq_identity_lookup")
        .returning(Identity.__table__.c.person_id)  # type: ignore[attr-defined]
    )
    if inserted.scalar_one_or_none() is None:
        return None, name
    return person_id, name


async def known_name(
    session: AsyncSession, *, agent: str, channel: ChannelRef, speaker_id: str
) -> str | None:
    """The name the agent knows the speaker ``speaker_id`` on ``channel`` by; ``None`` if new."""
    found = await session.exec(
        select(Person.display_name)
        .join(Identity, Identity.person_id == Person.id)  # type: ignore[arg-type]
        .where(
            Identity.agent == agent,
            Identity.service == channel.service,
            Identity.channel == channel.channel,
            Identity.speaker_id == speaker_id,
        )
    )
    return found.first()
