"""Remember harder (spec §4.1): the verbatim dialog behind a memory, by the memory's ID.

A summary can flatten what was said; when a weakly recalled memory matters, the agent reads
the exchange itself before asserting anything. The record's ULID leads to its conversation and
the range of turns it was formed from (``turn_first`` to ``turn_last``); a record without a
range gives its whole conversation.

A recollection (a record of level 2 or more, folded from others) has no dialog of its own:
remembering it harder gives the memories of dialog folded beneath it, and :func:`drill_down`
steps down one level (or to any level) at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity
from temporalio.exceptions import ApplicationError

from schemas.events import ChannelRef
from schemas.ids import InvalidIdError, check_ulid
from schemas.memory import MemoryRecordPublic
from schemas.recall import RememberHarderInput, RememberHarderResult
from store.db import Database
from store.queries.folding import beneath
from store.queries.recall import (
    Fence,
    dialog_span,
    memory_channels,
    memory_record,
    passes_fence,
)


class RememberHarderError(LookupError):
    """A memory that cannot be remembered harder; the message is one line saying why."""


class UnknownMemoryError(RememberHarderError):
    """No such memory for this agent (another agent's records are as good as absent)."""


class ForgottenMemoryError(RememberHarderError):
    """The memory was forgotten (culled or retracted): its dialog is not recalled."""


class OutOfReachError(RememberHarderError):
    """The memory exists but this conversation may not see it (channel or people present)."""


class NotARecollectionError(RememberHarderError):
    """Drilling down from a memory of dialog: nothing is folded beneath it."""


async def _reachable(
    session: AsyncSession,
    *,
    agent: str,
    record_id: str,
    channel: ChannelRef | None,
    participants: Sequence[str],
) -> tuple[MemoryRecordPublic, Fence | None]:
    """The record, checked as recall would check it, and the fence it was checked with."""
    record_id = check_ulid(record_id, what="memory id")
    record = await memory_record(session, record_id=record_id)
    if record is None or record.agent != agent:
        raise UnknownMemoryError(
            f"agent {agent!r} has no memory {record_id}: use an ID shown beside a memory"
        )
    if record.forgotten_at is not None:
        raise ForgottenMemoryError(
            f"memory {record_id} was forgotten on {record.forgotten_at:%Y-%m-%d}: "
            "its dialog is no longer recalled"
        )
    if channel is None:
        return record, None
    channels = await memory_channels(session, agent=agent, channel_key=channel.key)
    fence = Fence(agent=agent, channel_ids=channels, present=participants)
    if not await passes_fence(session, fence, record_id=record_id):
        raise OutOfReachError(
            f"memory {record_id} cannot be recalled on {channel.key} with the people present"
        )
    return record, fence


async def _beneath(
    session: AsyncSession,
    record: MemoryRecordPublic,
    *,
    to_level: int,
    fence: Fence | None,
    limit: int,
    note: str | None,
) -> RememberHarderResult:
    """``record`` with what is folded beneath it down to ``to_level``, at most ``limit``."""
    found = await beneath(
        session, record_id=record.id, to_level=to_level, fence=fence, limit=limit + 1
    )
    if not found:
        note = "nothing folded beneath this recollection is still remembered"
    return RememberHarderResult(
        record=record, beneath=found[:limit], truncated=len(found) > limit, note=note
    )


async def drill_down(
    db: Database,
    *,
    agent: str,
    record_id: str,
    to_level: int | None = None,
    limit: int = 200,
    channel: ChannelRef | None = None,
    participants: Sequence[str] = (),
) -> RememberHarderResult:
    """The records folded beneath the recollection ``record_id``, oldest first.

    Args:
        db: The database.
        agent: Whose recollection it must be.
        record_id: The recollection's ID, as shown beside it in the prompt.
        to_level: The level to reach (default: one below the recollection's).
        limit: Most records returned.
        channel: As for :func:`remember_harder`: the conversation asking.
        participants: Person IDs present in the asking conversation.

    Raises:
        NotARecollectionError: ``record_id`` is a memory of dialog (remember it harder).
        The errors of :func:`remember_harder`.
    """
    async with db.session() as session:
        record, fence = await _reachable(
            session, agent=agent, record_id=record_id, channel=channel, participants=participants
        )
        if record.level <= 1:
            raise NotARecollectionError(
                f"memory {record.id} is a memory of dialog, not a recollection: remember it "
                "harder for its exact words"
            )
        level = max(1, min(record.level - 1, to_level or record.level - 1))
        return await _beneath(session, record, to_level=level, fence=fence, limit=limit, note=None)


async def remember_harder(
    db: Database,
    *,
    agent: str,
    record_id: str,
    limit: int = 200,
    channel: ChannelRef | None = None,
    participants: Sequence[str] = (),
) -> RememberHarderResult:
    """The memory ``record_id`` of ``agent`` and the turns it was formed from, oldest first.

    Args:
        db: The database.
        agent: Whose memory it must be.
        record_id: The memory's ID, as shown beside it in the prompt.
        limit: Most turns returned; ``truncated`` says when there were more.
        channel: When set, the memory must be reachable from this channel (its own or its
            memory group) and visible to ``participants``, as for recall.
        participants: Person IDs present in the asking conversation.

    Raises:
        InvalidIdError: ``record_id`` is not a ULID.
        UnknownMemoryError: The agent has no such memory.
        ForgottenMemoryError: The memory was forgotten.
        OutOfReachError: The asking conversation may not see the memory.
    """
    limit = max(1, limit)
    async with db.session() as session:
        record, fence = await _reachable(
            session, agent=agent, record_id=record_id, channel=channel, participants=participants
        )
        if record.level > 1:
            return await _beneath(
                session,
                record,
                to_level=1,
                fence=fence,
                limit=limit,
                note="a recollection folded from the memories of dialog listed here: "
                "remember harder on one of them for its exact words",
            )
        if record.conversation_id is None:
            return RememberHarderResult(
                record=record, note="this memory was not formed from a stored conversation"
            )
        turns = await dialog_span(
            session,
            agent=agent,
            conversation_id=record.conversation_id,
            first=record.turn_first,
            last=record.turn_last,
            limit=limit + 1,
        )
    return RememberHarderResult(
        record=record,
        turns=turns[:limit],
        truncated=len(turns) > limit,
        note=None if turns else "the dialog of this memory is no longer stored",
    )


class RememberActivities:
    """Remember harder, for the pipeline and (later) the agent's tools."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @activity.defn(name="memory.remember_harder")
    async def remember_harder(self, data: RememberHarderInput) -> RememberHarderResult:
        """The verbatim dialog behind a memory; a refusal is a non-retryable error."""
        try:
            return await remember_harder(
                self._db,
                agent=data.agent,
                record_id=data.record_id,
                limit=data.limit,
                channel=data.channel,
                participants=data.participants,
            )
        except (RememberHarderError, InvalidIdError) as err:
            raise ApplicationError(str(err), type=type(err).__name__, non_retryable=True) from err
