"""An event's turn admitted to its conversation, and a conversation closed only when settled.

The agent writes a person's turn before its conversation hears of it, so the two can race: the
conversation may go idle and close just as the agent admits a turn to it. The conversation's row
decides, under its row lock. Admission locks the row and writes only into an open conversation;
a close locks it too and refuses while the newest person turn is one the conversation has not
been told of. Whichever takes the lock first wins, and neither loses the turn: a turn refused
by a closed conversation goes to a fresh one, and a conversation refused its close waits for the
turn it has not heard of yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import LiteralString

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.dialog import DialogTurn
from schemas.events import ChannelRef
from store.db import Database
from store.lane import Lane
from store.queries.dialog import insert_conversation, turn_params, write_turn
from store.sql import execute

_ADMITTED_TO = """
    SELECT conversation_id FROM dialog_turns WHERE id = :id
"""

_LOCK_OPEN = """
    SELECT status FROM conversations WHERE id = :id FOR UPDATE
"""

_WINDOW = """
    SELECT v.participants,
           ARRAY(SELECT d.id FROM dialog_turns AS d
                  WHERE d.conversation_id = v.id
                  ORDER BY d.seq DESC LIMIT :n) AS recent,
           ARRAY(SELECT d.id FROM dialog_turns AS d
                  WHERE d.conversation_id = v.id
                  ORDER BY d.seq ASC LIMIT :head) AS opening
      FROM conversations AS v
     WHERE v.id = :id
"""

_ADMIT_ON: LiteralString = """
    WITH earlier AS (
        SELECT conversation_id FROM dialog_turns WHERE id = %(id)s
    ), locked AS (
        SELECT v.id FROM conversations AS v
         WHERE v.id = %(conversation_id)s AND v.status = 'open'
           AND NOT EXISTS (SELECT 1 FROM earlier)
           FOR UPDATE
    ), inserted AS (
        INSERT INTO dialog_turns (id, agent, conversation_id, channel_id, role, speaker_id,
                                  speaker_name, person_id, text, at)
        SELECT %(id)s, %(agent)s, l.id, c.id, %(role)s, %(speaker_id)s, %(speaker_name)s,
               %(person_id)s, %(text)s, %(at)s
          FROM locked AS l
          JOIN channels AS c ON c.agent = %(agent)s AND c.key = %(channel_key)s
        ON CONFLICT (id) DO NOTHING
        RETURNING id
    ), counted AS (
        UPDATE conversations AS v
           SET turns = v.turns + 1,
               participants = CASE
                   WHEN CAST(%(person_id)s AS varchar) IS NULL
                     OR CAST(%(person_id)s AS varchar) = ANY(v.participants) THEN v.participants
                   ELSE array_append(v.participants, CAST(%(person_id)s AS varchar)) END
          FROM inserted AS i
         WHERE v.id = %(conversation_id)s
        RETURNING v.id
    )
    SELECT EXISTS (SELECT 1 FROM earlier) AS earlier,
           EXISTS (SELECT 1 FROM locked) AS open,
           EXISTS (SELECT 1 FROM counted) AS written
"""
"""The usual admission as one statement: lock the open conversation, write the turn into it and
count it. It writes nothing when the turn is already stored (a retried attempt's) or the
conversation is not open, and says which."""

_WINDOW_ON: LiteralString = """
    SELECT v.participants,
           ARRAY(SELECT d.id FROM dialog_turns AS d
                  WHERE d.conversation_id = v.id AND d.seq <= t.seq
                  ORDER BY d.seq DESC LIMIT %(n)s) AS recent,
           ARRAY(SELECT d.id FROM dialog_turns AS d
                  WHERE d.conversation_id = v.id
                  ORDER BY d.seq ASC LIMIT %(head)s) AS opening
      FROM conversations AS v
      JOIN dialog_turns AS t ON t.id = %(turn_id)s
     WHERE v.id = %(conversation_id)s
"""
"""The window up to and including the turn just admitted, once it is committed."""

_NEWEST_INPUT = """
    SELECT id FROM dialog_turns
     WHERE conversation_id = :id AND role = 'person'
     ORDER BY seq DESC LIMIT 1
"""

_CLOSE = """
    UPDATE conversations
       SET status = 'closed', closed_at = :closed_at, close_reason = :reason
     WHERE id = :id
"""


@dataclass(frozen=True)
class Window:
    """The conversation the turn is in, its recent turns (oldest first) and its participants."""

    conversation_id: str
    turn_ids: list[str]
    participants: list[str]
    opening_ids: list[str] = field(default_factory=list)
    """The conversation's first turns that are not among ``turn_ids`` (oldest first)."""


class _Settled(Enum):
    WRITTEN = "written"
    """The turn is in the open conversation, counted."""
    CLOSED = "closed"
    """The conversation is not open: the turn was not written."""
    IN_TRANSACTION = "in-transaction"
    """The single statement could not settle it: the transaction must."""


async def admit_turn(
    db: Database,
    *,
    agent: str,
    channel: ChannelRef,
    turn: DialogTurn,
    opening: bool,
    window_turns: int,
    opening_turns: int = 0,
) -> Window | None:
    """Write ``turn`` into its conversation if that is open; ``None`` if it has closed.

    A turn into a conversation already recorded (nearly every message) is one statement on the
    driver lane, and its window one more read. A conversation to record first, a turn an
    earlier attempt already stored and a missing channel row take the transaction of
    :func:`admit_turn_in`, which says what the window holds.
    """
    if not opening:
        admitted = await _admit_on(db.lane, agent=agent, channel=channel, turn=turn)
        if admitted is _Settled.CLOSED:
            return None
        if admitted is _Settled.WRITTEN:
            return await _window_on(
                db.lane, turn=turn, window_turns=window_turns, opening_turns=opening_turns
            )
    async with db.session() as session:
        return await admit_turn_in(
            session,
            agent=agent,
            channel=channel,
            turn=turn,
            opening=opening,
            window_turns=window_turns,
            opening_turns=opening_turns,
        )


async def _admit_on(lane: Lane, *, agent: str, channel: ChannelRef, turn: DialogTurn) -> _Settled:
    """Whether the turn was written in one statement, or why it was not."""
    row = await lane.first(_ADMIT_ON, turn_params(agent, channel, turn))
    assert row is not None  # a SELECT of three values always returns its row
    if row["written"]:
        return _Settled.WRITTEN
    if row["earlier"] or row["open"]:
        # Stored by an attempt before (perhaps into another conversation), or an open
        # conversation whose channel row is missing: both are the transaction's to settle.
        return _Settled.IN_TRANSACTION
    return _Settled.CLOSED


async def _window_on(
    lane: Lane, *, turn: DialogTurn, window_turns: int, opening_turns: int
) -> Window:
    row = await lane.first(
        _WINDOW_ON,
        {
            "conversation_id": turn.conversation_id,
            "turn_id": turn.turn_id,
            "n": window_turns,
            "head": opening_turns,
        },
    )
    assert row is not None  # the turn was committed into the conversation just now
    recent = list(reversed(row["recent"]))
    return Window(
        conversation_id=turn.conversation_id,
        turn_ids=recent,
        participants=list(row["participants"]),
        opening_ids=[each for each in row["opening"] if each not in recent],
    )


async def admit_turn_in(
    session: AsyncSession,
    *,
    agent: str,
    channel: ChannelRef,
    turn: DialogTurn,
    opening: bool,
    window_turns: int,
    opening_turns: int = 0,
) -> Window | None:
    """:func:`admit_turn` in one transaction, for every case.

    With ``opening`` the conversation is recorded first (a no-op when a retry already did).
    The turn is written under the conversation row's lock, so a close waits for it. A turn an
    earlier attempt already admitted stays where it is, and the window says which conversation
    that is. The window holds the ``window_turns`` latest turns and, apart, the first
    ``opening_turns`` when they are not among them. Commits.
    """
    earlier = (await execute(session, _ADMITTED_TO, {"id": turn.turn_id})).scalar_one_or_none()
    if earlier is not None and earlier != turn.conversation_id:
        # An attempt of the same workflow task that never completed admitted it already, to the
        # conversation that attempt named (a fresh ID is made from the task's time): adopt it.
        turn = turn.model_copy(update={"conversation_id": earlier})
    conversation_id = turn.conversation_id
    if opening:
        await insert_conversation(
            session,
            conversation_id=conversation_id,
            agent=agent,
            channel=channel,
            opened_at=turn.at,
        )
    status = (await execute(session, _LOCK_OPEN, {"id": conversation_id})).scalar_one_or_none()
    if status != "open":
        await session.rollback()
        return None
    await write_turn(session, agent=agent, channel=channel, turn=turn)
    # Read before the commit: after it, the read would open a transaction of its own.
    row = (
        await execute(
            session, _WINDOW, {"id": conversation_id, "n": window_turns, "head": opening_turns}
        )
    ).one()
    await session.commit()
    recent = list(reversed(row.recent))
    return Window(
        conversation_id=conversation_id,
        turn_ids=recent,
        participants=list(row.participants),
        opening_ids=[turn for turn in row.opening if turn not in recent],
    )


async def close_if_settled(
    session: AsyncSession,
    *,
    conversation_id: str,
    closed_at: datetime,
    reason: str,
    last_input: str | None,
) -> bool:
    """Close the conversation unless a person's turn newer than ``last_input`` was admitted.

    ``last_input`` is the newest person turn the conversation has been told of. Returns whether
    it closed (already closed counts). Commits.
    """
    status = (await execute(session, _LOCK_OPEN, {"id": conversation_id})).scalar_one_or_none()
    if status == "closed":
        await session.rollback()
        return True
    # Under the row lock, in a fresh snapshot: a turn admitted just before is seen here.
    newest = (await execute(session, _NEWEST_INPUT, {"id": conversation_id})).scalar_one_or_none()
    if newest is not None and newest != last_input:
        await session.rollback()
        return False
    await execute(
        session, _CLOSE, {"id": conversation_id, "closed_at": closed_at, "reason": reason}
    )
    await session.commit()
    return True
