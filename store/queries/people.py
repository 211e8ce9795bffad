"""People, identities and channels: resolve who is speaking, and where."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.events import ChannelRef, Speaker
from schemas.ids import new_ulid
from schemas.records import ResolvedSpeaker
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
        .on_conflict_do_update(constraint="uq_channel_key", set_={"last_active_at": seen_at})
        .returning(Channel.__table__.c.id)  # type: ignore[attr-defined]
    )
    result = await session.exec(stmt)
    return str(result.scalar_one())


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
    channel supplies refreshes the person's name.
    """
    channel_id = await ensure_channel(session, agent=agent, channel=channel, seen_at=seen_at)
    found = await session.exec(
        select(Identity.person_id).where(
            Identity.agent == agent,
            Identity.service == channel.service,
            Identity.channel == channel.channel,
            Identity.speaker_id == speaker.speaker_id,
        )
    )
    person_id = found.first()
    created = False
    if person_id is None:
        person_id = new_ulid()
        session.add(
            Person(
                id=person_id,
                agent=agent,
                display_name=speaker.display_name or speaker.speaker_id,
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
            # Another worker created the identity first: use its person, drop ours.
            await session.rollback()
            return await resolve_speaker(
                session, agent=agent, channel=channel, speaker=speaker, seen_at=seen_at
            )
        created = True
    values: dict[str, object] = {"last_seen_at": seen_at}
    if speaker.display_name:
        values["display_name"] = speaker.display_name
    await session.exec(update(Person).where(Person.id == person_id).values(**values))  # type: ignore[arg-type]
    await session.exec(
        update(Channel).where(Channel.id == channel_id).values(last_person_id=person_id)  # type: ignore[arg-type]
    )
    person = await session.get(Person, person_id)
    await session.commit()
    assert person is not None
    return ResolvedSpeaker(person_id=person_id, person_name=person.display_name, created=created)
