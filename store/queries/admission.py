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

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.dialog import DialogTurn
from schemas.events import ChannelRef
from store.queries.dialog import insert_conversation, write_turn
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


async def admit_turn(
    session: AsyncSession,
    *,
    agent: str,
    channel: ChannelRef,
    turn: DialogTurn,
    opening: bool,
    window_turns: int,
    opening_turns: int = 0,
) -> Window | None:
    """Write ``turn`` into its conversation if that is open; ``None`` if it has closed.

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
