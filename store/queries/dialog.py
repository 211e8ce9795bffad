"""Conversations and verbatim turns: written through from the workflows, idempotently.

Dialog is ordered by ``seq``, which PostgreSQL assigns as each turn is written, never by turn
ID: a person's turn ID is the client's event ULID, whose time part the client chooses. The ID
is the idempotency key (a retried write stores nothing twice and keeps its first ``seq``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import LiteralString

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef
from store.db import Database
from store.lane import Lane
from store.queries.people import ensure_channel
from store.sql import execute, in_session
from store.tables import Conversation, DialogTurnRow


async def open_conversation(
    session: AsyncSession,
    *,
    conversation_id: str,
    agent: str,
    channel: ChannelRef,
    opened_at: datetime,
    source: str = "live",
) -> None:
    """Record a conversation as open (a no-op if it already is)."""
    await insert_conversation(
        session,
        conversation_id=conversation_id,
        agent=agent,
        channel=channel,
        opened_at=opened_at,
        source=source,
    )
    await session.commit()


async def insert_conversation(
    session: AsyncSession,
    *,
    conversation_id: str,
    agent: str,
    channel: ChannelRef,
    opened_at: datetime,
    source: str = "live",
) -> None:
    """Insert the conversation's row, open, unless it exists (its channel's too). No commit."""
    channel_id = await ensure_channel(session, agent=agent, channel=channel, seen_at=opened_at)
    await session.exec(
        insert(Conversation)
        .values(
            id=conversation_id,
            agent=agent,
            channel_id=channel_id,
            status="open",
            opened_at=opened_at,
            turns=0,
            participants=[],
            source=source,
        )
        .on_conflict_do_nothing(index_elements=["id"])
    )


_RECORD_TURN: LiteralString = """
    WITH params AS (
        SELECT CAST(%(id)s AS varchar) AS id, CAST(%(agent)s AS varchar) AS agent,
               CAST(%(conversation_id)s AS varchar) AS conversation_id,
               CAST(%(channel_key)s AS varchar) AS channel_key, CAST(%(role)s AS varchar) AS role,
               CAST(%(speaker_id)s AS varchar) AS speaker_id,
               CAST(%(speaker_name)s AS varchar) AS speaker_name,
               CAST(%(person_id)s AS varchar) AS person_id, CAST(%(text)s AS text) AS text,
               CAST(%(at)s AS timestamptz) AS at
    ), inserted AS (
        INSERT INTO dialog_turns (id, agent, conversation_id, channel_id, role, speaker_id,
                                  speaker_name, person_id, text, at)
        SELECT p.id, p.agent, p.conversation_id, c.id, p.role, p.speaker_id, p.speaker_name,
               p.person_id, p.text, p.at
          FROM params AS p
          JOIN channels AS c ON c.agent = p.agent AND c.key = p.channel_key
        ON CONFLICT (id) DO NOTHING
        RETURNING id
    )
    UPDATE conversations AS v
       SET turns = v.turns + 1,
           participants = CASE
               WHEN p.person_id IS NULL OR p.person_id = ANY(v.participants) THEN v.participants
               ELSE array_append(v.participants, p.person_id) END
      FROM params AS p
     WHERE v.id = p.conversation_id AND EXISTS (SELECT 1 FROM inserted)
    RETURNING v.id
    """


async def record_turn(
    session: AsyncSession, *, agent: str, channel: ChannelRef, turn: DialogTurn
) -> bool:
    """Write one turn through and commit; returns ``False`` if it was already stored (a retry).

    One statement inserts the turn and updates the conversation's turn count and participants.
    """
    stored = await write_turn(session, agent=agent, channel=channel, turn=turn)
    await session.commit()
    return stored


def turn_params(agent: str, channel: ChannelRef, turn: DialogTurn) -> dict[str, object]:
    """A turn's row as the statements writing it take their parameters."""
    return {
        "id": turn.turn_id,
        "agent": agent,
        "conversation_id": turn.conversation_id,
        "channel_key": channel.key,
        "role": turn.role.value,
        "speaker_id": turn.speaker_id,
        "speaker_name": turn.speaker_name,
        "person_id": turn.speaker_id if turn.role is Role.PERSON else None,
        "text": turn.text,
        "at": turn.at,
    }


async def write_turn(
    session: AsyncSession, *, agent: str, channel: ChannelRef, turn: DialogTurn
) -> bool:
    """:func:`record_turn` without the commit, for a caller that reads on in its transaction."""
    params = turn_params(agent, channel, turn)
    read = in_session(session)
    stored = bool(await read(_RECORD_TURN, params))
    if not stored and await session.get(DialogTurnRow, turn.turn_id) is None:
        # The channel row is missing (a path that never resolved a speaker): create it, retry.
        await ensure_channel(session, agent=agent, channel=channel, seen_at=turn.at)
        stored = bool(await read(_RECORD_TURN, params))
    return stored


async def record_turn_on(
    db: Database, *, agent: str, channel: ChannelRef, turn: DialogTurn
) -> bool:
    """:func:`record_turn` in one statement on the driver lane, for every reply's turn.

    A turn the statement did not write (stored already by an attempt before, or its channel
    row missing) is settled by :func:`record_turn` in a session, which tells the two apart.
    """
    if await db.lane.rows(_RECORD_TURN, turn_params(agent, channel, turn)):
        return True
    async with db.autocommit() as session:
        return await record_turn(session, agent=agent, channel=channel, turn=turn)


async def every_open_conversation(session: AsyncSession) -> list[tuple[str, str]]:
    """Every agent's open conversations, as (agent, conversation ID), oldest first."""
    rows = await session.exec(
        select(Conversation.agent, Conversation.id)
        .where(Conversation.status == "open")
        .order_by(col(Conversation.id))
    )
    return [(str(agent), str(conversation)) for agent, conversation in rows]


_OWN_TURNS = """
    SELECT count(*) FROM dialog_turns AS d
      JOIN conversations AS v ON v.id = d.conversation_id
      JOIN channels AS c ON c.id = v.channel_id
     WHERE v.agent = :agent AND c.agent = :agent AND c.key = :key
       AND v.status = 'open' AND d.role = 'agent'
"""


async def own_turns_in_open_conversation(session: AsyncSession, *, agent: str, key: str) -> int:
    """How many times ``agent`` has spoken in its open conversation on channel ``key``."""
    result = await execute(session, _OWN_TURNS, {"agent": agent, "key": key})
    return int(result.scalar_one())


async def close_conversation(
    session: AsyncSession, *, conversation_id: str, closed_at: datetime, reason: str
) -> None:
    """Mark a conversation closed."""
    await session.exec(
        update(Conversation)
        .where(col(Conversation.id) == conversation_id)
        .values(status="closed", closed_at=closed_at, close_reason=reason)
    )
    await session.commit()


def _to_turn(row: DialogTurnRow) -> DialogTurn:
    return DialogTurn(
        turn_id=row.id,
        conversation_id=row.conversation_id,
        role=Role(row.role),
        speaker_id=row.speaker_id,
        speaker_name=row.speaker_name,
        text=row.text,
        at=row.at,
    )


# One array parameter instead of an expanded IN list, on the driver lane: every prompt loads
# its window (up to dozens of IDs), and through the session the statement, the bridge and the
# row objects were most of this read's CPU.
_LOAD_TURNS = """
    SELECT id, conversation_id, role, speaker_id, speaker_name, text, at
      FROM dialog_turns
     WHERE id = ANY(%(ids)s::varchar[])
     ORDER BY seq
"""


async def load_turns(lane: Lane, *, turn_ids: Sequence[str]) -> list[DialogTurn]:
    """The turns with these IDs, in the order they arrived."""
    if not turn_ids:
        return []
    rows = await lane.rows(_LOAD_TURNS, {"ids": list(turn_ids)})
    return [
        DialogTurn(
            turn_id=row["id"],
            conversation_id=row["conversation_id"],
            role=Role(row["role"]),
            speaker_id=row["speaker_id"],
            speaker_name=row["speaker_name"],
            text=row["text"],
            at=row["at"],
        )
        for row in rows
    ]


async def conversation_turns(
    session: AsyncSession, *, conversation_id: str, limit: int = 1000
) -> list[DialogTurn]:
    """A conversation's turns, in the order they arrived."""
    rows = await session.exec(
        select(DialogTurnRow)
        .where(DialogTurnRow.conversation_id == conversation_id)
        .order_by(col(DialogTurnRow.seq))
        .limit(limit)
    )
    return [_to_turn(row) for row in rows]
