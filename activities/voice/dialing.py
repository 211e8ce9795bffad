"""Dialling once per tool call, whatever crashes or retries come between (``place_call``).

The transport takes no idempotency key, so the intent is written first, keyed by the tool
call's ID (which every retried attempt keeps), and settled with the transport's answer:

1. A retry that finds the intent ``placed`` returns the recorded call; ``failed``, the
   recorded reason. Neither dials.
2. A retry that finds it still ``dialing`` cannot know whether the earlier attempt dialled
   (it may have crashed after the transport answered, before the answer was recorded). The
   key travelled with that dial, so the transport is asked for a call carrying it: one found
   is adopted; only when the transport says there is none is the number dialled again. When
   the transport cannot tell, the attempt fails: it never dials blind.
3. A dial that got no answer at all is looked up the same way before it is reported.

What is left: a dial still in flight while the retry looks (the earlier worker's request
reaching the transport after the lookup). A retry comes after the earlier attempt's timeout,
long after any request it sent was answered or dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from activities.voice.transport import CallTransport, DialUnansweredError, TransportError
from schemas.voice import CallRef
from store.db import Database
from store.queries.dial_intents import open_intent, record_failed, record_placed
from store.tables.columns import utcnow
from store.tables.voice import DialIntentRow, DialStatus

CLOCK_SKEW = timedelta(minutes=5)
"""How far the transport's clock may lag ours: a lookup reads calls from this long before."""


@dataclass(frozen=True)
class DialIntent:
    """One call to place, as the tool resolved it."""

    key: str
    """The tool call's ID: the same in every attempt of that call."""
    agent: str
    person_id: str
    number: str
    first_message: str


@dataclass(frozen=True)
class Dialled:
    """The call placed for an intent, and whom it rings (as first recorded)."""

    call: CallRef
    person_id: str
    number: str


async def dial_once(db: Database, transport: CallTransport, intent: DialIntent) -> Dialled:
    """Place ``intent``'s call, or find the one an earlier attempt placed.

    A retry dials the person and number the first attempt recorded, even if the contact's
    number changed in between: the intent is what was decided.

    Raises:
        TransportError: The call was not placed, or whether it was cannot be told.
    """
    async with db.session() as session:
        row, fresh = await open_intent(
            session,
            key=intent.key,
            agent=intent.agent,
            person_id=intent.person_id,
            number=intent.number,
            at=utcnow(),
        )
    if row.status == DialStatus.PLACED and row.call_id:
        return _dialled(row, CallRef(call_id=row.call_id, status=row.call_status or "queued"))
    if row.status == DialStatus.FAILED:
        raise TransportError(row.error or "the voice transport did not place the call")
    if not fresh:
        found = await transport.find(intent.key, row.created_at - CLOCK_SKEW)
        if found is not None:
            return await _placed(db, row, found)
    try:
        call = await transport.dial(row.number, row.agent, intent.first_message, key=intent.key)
    except DialUnansweredError as err:
        call = await _after_silence(db, transport, row, err)
    except TransportError as err:
        await _failed(db, row, str(err))
        raise
    return await _placed(db, row, call)


async def _after_silence(
    db: Database, transport: CallTransport, row: DialIntentRow, err: DialUnansweredError
) -> CallRef:
    """The call a dial without an answer placed after all; raises when none was."""
    try:
        found = await transport.find(row.id, row.created_at - CLOCK_SKEW)
    except TransportError as lookup:
        # Left ``dialing``: a later attempt of this call asks again before it dials.
        raise TransportError(f"{err}; whether the call was placed is unknown ({lookup})") from None
    if found is None:
        await _failed(db, row, str(err))
        raise err
    return found


async def _placed(db: Database, row: DialIntentRow, call: CallRef) -> Dialled:
    async with db.session() as session:
        await record_placed(
            session, key=row.id, call_id=call.call_id, call_status=call.status, at=utcnow()
        )
    return _dialled(row, call)


async def _failed(db: Database, row: DialIntentRow, error: str) -> None:
    async with db.session() as session:
        await record_failed(session, key=row.id, error=error, at=utcnow())


def _dialled(row: DialIntentRow, call: CallRef) -> Dialled:
    return Dialled(call=call, person_id=row.person_id, number=row.number)
