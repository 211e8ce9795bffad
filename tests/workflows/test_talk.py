"""An agent you can talk to: the full pipeline on the real Temporal and PostgreSQL."""

from __future__ import annotations

from sqlmodel import select

from schemas.events import Outcome
from store.tables import DialogTurnRow, OutboxRow
from tests.harness import Harness


async def test_agent_replies_and_the_dialog_is_stored(harness: Harness) -> None:
    agent = await harness.create_agent()
    receipt = await harness.say(agent.handle, "hello there")

    assert receipt.marker is not None
    assert receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == "hello there"  # the scripted model echoes
    async with harness.db.session() as session:
        turns = (
            await session.exec(
                select(DialogTurnRow).where(
                    DialogTurnRow.conversation_id == receipt.marker.conversation_id
                )
            )
        ).all()
        outbox = (
            await session.exec(select(OutboxRow).where(OutboxRow.agent == agent.handle))
        ).all()
    assert [(t.role, t.text) for t in sorted(turns, key=lambda t: t.id)] == [
        ("person", "hello there"),
        ("agent", "hello there"),
    ]
    assert len(outbox) == 1
