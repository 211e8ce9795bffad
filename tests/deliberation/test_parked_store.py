"""Parked conclusions in the store: the waiting ones a reply's prompt reads, newest first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schemas.deliberation import Objection
from schemas.ids import new_ulid
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries.deliberation import consume_conclusions, park_conclusion, waiting_conclusions
from tests.deliberation.helpers import new_agent

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
CHANNEL = "chat:parked"
DOUBT = Objection(type="confabulation", span="last Tuesday", explanation="No such meeting.")


async def _park(
    db: Database, agent: str, *, at: datetime, expires: datetime, channel: str = CHANNEL
) -> str:
    parked_id = new_ulid()
    async with db.session() as session:
        await park_conclusion(
            session,
            parked_id=parked_id,
            agent=agent,
            channel_key=channel,
            activation_id=new_ulid(),
            conversation_id=new_ulid(),
            candidate=f"said at {at:%H:%M}",
            objections=[DOUBT],
            refined=None if at == NOW else "Let me check first.",
            created_at=at,
            expires_at=expires,
        )
    return parked_id


async def test_waiting_conclusions_are_unconsumed_unexpired_and_newest_first(
    postgres: EmbeddedPostgres,
) -> None:
    db = Database(postgres.dsn, pool_size=2)
    try:
        agent = await new_agent(db)
        later = NOW + timedelta(days=1)
        oldest = await _park(db, agent, at=NOW - 3 * MINUTE, expires=later)
        older = await _park(db, agent, at=NOW - 2 * MINUTE, expires=later)
        newer = await _park(db, agent, at=NOW - MINUTE, expires=later)
        await _park(db, agent, at=NOW - MINUTE // 2, expires=NOW)  # expires as it is read
        await _park(db, agent, at=NOW, expires=later, channel="chat:elsewhere")
        consumed = await _park(db, agent, at=NOW, expires=later)
        async with db.session() as session:
            await consume_conclusions(session, ids=[consumed], activation_id=new_ulid(), at=NOW)

        waiting = await waiting_conclusions(
            db.lane, agent=agent, channel_key=CHANNEL, now=NOW, limit=2
        )
        every = await waiting_conclusions(
            db.lane, agent=agent, channel_key=CHANNEL, now=NOW, limit=10
        )
    finally:
        await db.aclose()

    assert [row.id for row in waiting] == [newer, older]
    assert [row.id for row in every] == [newer, older, oldest]
    first = waiting[0]
    assert (first.agent, first.channel_key, first.candidate) == (agent, CHANNEL, "said at 11:59")
    assert first.objections == [DOUBT.model_dump(mode="json", exclude_none=True)]
    assert first.refined == "Let me check first." and first.consumed_at is None
    assert first.created_at == NOW - MINUTE and first.expires_at == later
