"""What a live call reads and writes: callers known by number, call identities, prompts, turns."""

from __future__ import annotations

from datetime import datetime

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import SELF_SERVICE
from schemas.dialog import DialogTurn
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from store.queries.dialog import record_turn
from store.sql import execute

_KNOWN_NUMBER = """
    SELECT p.id, p.display_name
      FROM people AS p
     WHERE p.agent = :agent
       AND (p.id IN (SELECT i.person_id FROM identities AS i
                      WHERE i.agent = :agent AND i.service <> :self
                        AND lower(i.speaker_id) = lower(:number))
            OR p.id IN (SELECT a.person_id FROM contact_addresses AS a
                         WHERE a.agent = :agent AND a.address = :number))
     ORDER BY p.last_seen_at DESC
     LIMIT 1
"""

_ATTACH = """
    INSERT INTO identities (id, agent, person_id, service, channel, speaker_id, created_at)
    VALUES (:id, :agent, :person_id, :service, :channel, :speaker_id, :at)
    ON CONFLICT ON CONSTRAINT uq_identity_lookup DO NOTHING
"""

_PROMPT_OF = """
    SELECT system FROM prompts WHERE activation_id = :activation ORDER BY created_at DESC LIMIT 1
"""

_PERSONA = """
    SELECT name, persona FROM agents WHERE handle = :agent
"""


async def known_number(session: AsyncSession, *, agent: str, number: str) -> tuple[str, str] | None:
    """The person ``agent`` knows by ``number`` (a speaker ID or a recorded address), if any."""
    row = (
        await execute(
            session, _KNOWN_NUMBER, {"agent": agent, "number": number, "self": SELF_SERVICE}
        )
    ).first()
    return (str(row.id), str(row.display_name)) if row is not None else None


async def attach_call_identity(
    session: AsyncSession,
    *,
    agent: str,
    person_id: str,
    channel: ChannelRef,
    speaker_id: str,
    at: datetime,
) -> None:
    """Make ``speaker_id`` on a call's own channel the known ``person_id``. Commits.

    Each call has a channel of its own; without this, admission would meet a stranger there.
    """
    await execute(
        session,
        _ATTACH,
        {
            "id": new_ulid(),
            "agent": agent,
            "person_id": person_id,
            "service": channel.service,
            "channel": channel.channel,
            "speaker_id": speaker_id,
            "at": at,
        },
    )
    await session.commit()


async def prompt_of(session: AsyncSession, *, activation_id: str) -> str | None:
    """The system text the pipeline assembled for activation ``activation_id``."""
    value = (await execute(session, _PROMPT_OF, {"activation": activation_id})).scalar_one_or_none()
    return str(value) if value is not None else None


async def persona_of(session: AsyncSession, *, agent: str) -> tuple[str, str] | None:
    """The agent's name and seed persona, or ``None`` for no such agent."""
    row = (await execute(session, _PERSONA, {"agent": agent})).first()
    return (str(row.name), str(row.persona)) if row is not None else None


async def record_spoken(
    session: AsyncSession, *, agent: str, channel: ChannelRef, turn: DialogTurn
) -> bool:
    """The words the agent spoke on a call, as its dialog turn (once: the ID is the key)."""
    return await record_turn(session, agent=agent, channel=channel, turn=turn)


_PHONE_OF = """
    SELECT address FROM contact_addresses
     WHERE agent = :agent AND person_id = :person AND kind IN ('phone', 'mobile', 'tel')
     ORDER BY created_at DESC LIMIT 1
"""

_NUMBER_IDENTITY = """
    SELECT speaker_id FROM identities
     WHERE agent = :agent AND person_id = :person AND speaker_id ~ '^\\+?[0-9]{3,20}$'
     ORDER BY created_at DESC LIMIT 1
"""


async def phone_of(session: AsyncSession, *, agent: str, person_id: str) -> str | None:
    """The number to call a person on: a recorded phone address, else a number they called from."""
    for sql in (_PHONE_OF, _NUMBER_IDENTITY):
        found = (
            await execute(session, sql, {"agent": agent, "person": person_id})
        ).scalar_one_or_none()
        if found:
            return str(found)
    return None


_REPLIES = """
    SELECT activation_id, text FROM outbox WHERE activation_id = ANY(:ids)
"""


async def replies_of(session: AsyncSession, *, activation_ids: list[str]) -> list[str]:
    """What runs ``activation_ids`` transmitted, in their order (a run not found is left out)."""
    rows = (await execute(session, _REPLIES, {"ids": list(activation_ids)})).all()
    texts = {str(row.activation_id): str(row.text) for row in rows}
    return [texts[activation] for activation in activation_ids if activation in texts]
