"""Operator curation of the contact directory: list, show, rename, attach, detach, prefer, fold.

Every operation checks its input before writing anything, so a refused request changes
nothing. A person is named by their ID, their display name (any case) or a speaker ID of
theirs; a name that fits several people is refused with their IDs.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, or_
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, delete, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import SELF_SERVICE
from schemas.contacts import (
    ContactAddress,
    ContactError,
    ContactIdentity,
    ContactRecord,
    clean_name,
)
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from store.queries.fold import FoldResult, fold_person
from store.tables import ContactAddressRow, Identity, Person


def _not_only_self() -> object:
    """People the agent met: not its own self-channel records (an identity-less person stays)."""
    own = select(Identity.person_id).where(Identity.service == SELF_SERVICE)
    other = select(Identity.person_id).where(Identity.service != SELF_SERVICE)
    return or_(col(Person.id).not_in(own), col(Person.id).in_(other))


async def find_person(session: AsyncSession, *, agent: str, who: str) -> Person:
    """The one person ``who`` names.

    Raises:
        ContactError: Nobody, or several people, match.
    """
    needle = clean_name(who, what="person")
    by_identity = select(Identity.person_id).where(
        Identity.agent == agent, func.lower(Identity.speaker_id) == needle.lower()
    )
    found = list(
        await session.exec(
            select(Person).where(
                Person.agent == agent,
                _not_only_self(),  # type: ignore[arg-type]
                or_(
                    col(Person.id) == needle.upper(),
                    func.lower(Person.display_name) == needle.lower(),
                    col(Person.id).in_(by_identity),
                ),
            )
        )
    )
    if not found:
        raise ContactError(f"{agent} has no contact {needle[:80]!r}: see persyn contacts list")
    if len(found) > 1:
        listed = ", ".join(f"{p.display_name} ({p.id})" for p in found)
        raise ContactError(f"{needle[:80]!r} could be several people: {listed}; use an ID")
    return found[0]


async def _record(session: AsyncSession, person: Person) -> ContactRecord:
    identities = await session.exec(
        select(Identity).where(Identity.person_id == person.id).order_by(col(Identity.created_at))
    )
    addresses = await session.exec(
        select(ContactAddressRow)
        .where(ContactAddressRow.person_id == person.id)
        .order_by(col(ContactAddressRow.kind), col(ContactAddressRow.address))
    )
    return ContactRecord(
        person_id=person.id,
        name=person.display_name,
        first_met=person.created_at,
        last_interaction=person.last_seen_at,
        preferred_channel=person.preferred_channel,
        identities=[
            ContactIdentity(
                service=i.service, channel=i.channel, speaker_id=i.speaker_id, since=i.created_at
            )
            for i in identities
        ],
        addresses=[ContactAddress(kind=a.kind, address=a.address) for a in addresses],
    )


async def list_contacts(session: AsyncSession, *, agent: str) -> list[ContactRecord]:
    """Everyone the agent has met, most recent interaction first."""
    people = await session.exec(
        select(Person)
        .where(Person.agent == agent, _not_only_self())  # type: ignore[arg-type]
        .order_by(col(Person.last_seen_at).desc())
    )
    return [await _record(session, p) for p in list(people)]


async def show_contact(session: AsyncSession, *, agent: str, who: str) -> ContactRecord:
    """One contact in full."""
    return await _record(session, await find_person(session, agent=agent, who=who))


async def rename_contact(
    session: AsyncSession, *, agent: str, who: str, name: str
) -> ContactRecord:
    """Give a contact the operator's name for them; channels' names no longer replace it."""
    name = clean_name(name)
    person = await find_person(session, agent=agent, who=who)
    person.display_name = name
    person.name_curated = True
    session.add(person)
    await session.commit()
    return await show_contact(session, agent=agent, who=person.id)


async def attach_identity(
    session: AsyncSession, *, agent: str, who: str, channel: ChannelRef, speaker_id: str
) -> ContactRecord:
    """Add the lookup key ``channel`` + ``speaker_id`` to a contact.

    It is written exactly as a channel resolves a sender, so the next message from that
    speaker on that channel is theirs.

    Raises:
        ContactError: The key already belongs to someone (fold or detach first).
    """
    speaker_id = clean_name(speaker_id, what="speaker id")
    person = await find_person(session, agent=agent, who=who)
    owner = (
        await session.exec(
            select(Person)
            .join(Identity, col(Identity.person_id) == col(Person.id))
            .where(
                Identity.agent == agent,
                Identity.service == channel.service,
                Identity.channel == channel.channel,
                Identity.speaker_id == speaker_id,
            )
        )
    ).first()
    if owner is not None:
        whose = "them" if owner.id == person.id else f"{owner.display_name} ({owner.id})"
        raise ContactError(
            f"{speaker_id!r} on {channel.key} already belongs to {whose}: fold or detach first"
        )
    await session.exec(
        insert(Identity).values(
            id=new_ulid(),
            agent=agent,
            person_id=person.id,
            service=channel.service,
            channel=channel.channel,
            speaker_id=speaker_id,
            created_at=func.now(),
        )
    )
    await session.commit()
    return await show_contact(session, agent=agent, who=person.id)


async def detach_identity(
    session: AsyncSession, *, agent: str, channel: ChannelRef, speaker_id: str
) -> str:
    """Remove a lookup key; the next message on it starts a new person. History stays.

    Returns:
        The name of the person it belonged to.

    Raises:
        ContactError: No contact has that identity.
    """
    speaker_id = clean_name(speaker_id, what="speaker id")
    identity = (
        await session.exec(
            select(Identity).where(
                Identity.agent == agent,
                Identity.service == channel.service,
                Identity.channel == channel.channel,
                Identity.speaker_id == speaker_id,
            )
        )
    ).first()
    if identity is None or identity.service == SELF_SERVICE:
        raise ContactError(
            f"no contact of {agent} is {speaker_id[:80]!r} on {channel.key}: "
            "see persyn contacts show"
        )
    person = await session.get(Person, identity.person_id)
    await session.delete(identity)
    await session.commit()
    return person.display_name if person else identity.person_id


async def attach_address(
    session: AsyncSession, *, agent: str, who: str, kind: str, address: str
) -> ContactRecord:
    """Record an address (email, phone, ...) for a contact; recording it twice is harmless."""
    address = clean_name(address, what="address", max_chars=320)
    person = await find_person(session, agent=agent, who=who)
    await session.exec(
        insert(ContactAddressRow)
        .values(
            id=new_ulid(),
            agent=agent,
            person_id=person.id,
            kind=kind,
            address=address,
            created_at=func.now(),
        )
        .on_conflict_do_nothing(constraint="uq_contact_address")
    )
    await session.commit()
    return await show_contact(session, agent=agent, who=person.id)


async def detach_address(
    session: AsyncSession, *, agent: str, who: str, kind: str, address: str
) -> ContactRecord:
    """Forget an address of a contact.

    Raises:
        ContactError: The contact has no such address.
    """
    person = await find_person(session, agent=agent, who=who)
    result = await session.exec(
        delete(ContactAddressRow).where(
            col(ContactAddressRow.person_id) == person.id,
            col(ContactAddressRow.kind) == kind,
            col(ContactAddressRow.address) == address,
        )
    )
    if not result.rowcount:
        raise ContactError(f"{person.display_name} has no {kind} address {address[:80]!r}")
    await session.commit()
    return await show_contact(session, agent=agent, who=person.id)


async def prefer_channel(
    session: AsyncSession, *, agent: str, who: str, channel: ChannelRef | None
) -> ContactRecord:
    """Set (or with ``None`` clear) the channel the agent reaches a contact on.

    Raises:
        ContactError: The contact has no identity on that channel.
    """
    person = await find_person(session, agent=agent, who=who)
    if channel is not None:
        reachable = (
            await session.exec(
                select(Identity.id).where(
                    Identity.person_id == person.id,
                    Identity.service == channel.service,
                    Identity.channel == channel.channel,
                )
            )
        ).first()
        if reachable is None:
            raise ContactError(
                f"{person.display_name} has no identity on {channel.key}: attach one first"
            )
    person.preferred_channel = channel.key if channel else None
    session.add(person)
    await session.commit()
    return await show_contact(session, agent=agent, who=person.id)


async def fold_contacts(
    session: AsyncSession,
    *,
    agent: str,
    folded: str,
    survivor: str,
    name: str | None,
    by: str,
    at: datetime,
) -> FoldResult:
    """Fold one contact into another, retroactively, under ``name`` (default: the survivor's).

    Raises:
        ContactError: Either is unknown, or they are the same person.
    """
    by = clean_name(by, what="operator")
    chosen = clean_name(name) if name is not None else None
    gone = await find_person(session, agent=agent, who=folded)
    kept = await find_person(session, agent=agent, who=survivor)
    if gone.id == kept.id:
        raise ContactError(f"{gone.display_name} ({gone.id}) cannot be folded into themselves")
    return await fold_person(
        session,
        agent=agent,
        victim=gone.id,
        survivor=kept.id,
        name=chosen or kept.display_name,
        by=by,
        at=at,
    )
