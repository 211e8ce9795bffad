"""A message's path opens a transaction only where several writes must land together.

Every read and every single-statement write on the path runs in autocommit: a transaction
around them costs two more round trips (``BEGIN`` and its ``COMMIT`` or ``ROLLBACK``) and
reads nothing different under READ COMMITTED (``store.db.Database.autocommit``). Only a
conversation's first turn needs one: admission records the conversation and writes the turn
into it together. Every later turn is one statement on the driver lane, which locks the
conversation's row, writes the turn and counts it (``store.queries.admission``).
"""

from __future__ import annotations

from collections import Counter

from sqlalchemy import event
from sqlalchemy.engine import Connection
from temporalio import activity

from tests.harness import Harness

TRANSACTIONAL = "admission.admit"
"""The one step whose statements must run together, when its turn opens a conversation."""


def _step() -> str:
    try:
        return activity.info().activity_type
    except RuntimeError:
        return "(outside an activity)"


async def test_only_the_turn_that_opens_a_conversation_opens_a_transaction(
    harness: Harness,
) -> None:
    agent = (await harness.create_agent()).handle
    opened: Counter[str] = Counter()

    def on_end(connection: Connection) -> None:
        # Each transaction ends once, in a COMMIT or a ROLLBACK. SQLAlchemy reports those for
        # a connection in autocommit too (the driver sends nothing): those are not counted.
        if not connection.connection.dbapi_connection.autocommit:  # type: ignore[union-attr]
            opened[_step()] += 1

    engine = harness.deps.db.engine.sync_engine
    event.listen(engine, "commit", on_end)
    event.listen(engine, "rollback", on_end)
    try:
        # First contact: the person is created with their identity, then the conversation is
        # recorded with the turn in it, each a transaction of admission's.
        await harness.say(agent, "hello there")
        first = Counter(opened)
        opened.clear()
        for i in range(3):
            receipt = await harness.say(agent, f"message {i}")
            assert receipt.marker is not None
    finally:
        event.remove(engine, "commit", on_end)
        event.remove(engine, "rollback", on_end)

    assert first == {TRANSACTIONAL: 2}, first
    assert opened == Counter(), opened
