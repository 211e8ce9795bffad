"""Reminder administration use cases on the real Temporal and PostgreSQL.

Naming the wrong agent cancels nothing; naming none (the operator) reaches any reminder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.scheduling.reminders import Reminders
from schemas.autonomy import ReminderStatus
from store.db import Database
from store.tables.columns import utcnow
from temporal.client import connect
from tests.harness import Stack, unique
from tests.memory.recall.records import new_agent
from usecases import reminders
from usecases.errors import NotTheAgentsError, UnknownAgentError
from usecases.reminders import ReminderRefusedError


@pytest.fixture
async def db(stack: Stack) -> AsyncIterator[Database]:
    database = Database(stack.dsn, pool_size=2)
    yield database
    await database.aclose()


async def test_cancelling_as_another_agent_is_refused_and_the_reminder_stays(
    stack: Stack, db: Database
) -> None:
    settings = stack.settings()
    owner, other = await new_agent(db, "ucrem"), await new_agent(db, "ucremother")
    client = await connect(settings)
    made = await Reminders(db, client, settings.autonomy).create(
        agent=owner,
        objective="Water the plants.",
        now=utcnow(),
        task_queue=unique("q"),
        every_minutes=60,
    )

    with pytest.raises(NotTheAgentsError, match=f"not one of {other}'s reminders"):
        await reminders.cancel_reminder(
            settings=settings, reminder_id=made.reminder_id, agent=other
        )
    shown = await reminders.show_reminder(settings=settings, reminder_id=made.reminder_id)
    assert shown.status == ReminderStatus.ACTIVE and shown.next_fire_at is not None

    listed = await reminders.list_reminders(settings=settings, agent=owner, include_finished=False)
    assert [r.reminder_id for r in listed] == [made.reminder_id]

    cancelled = await reminders.cancel_reminder(
        settings=settings, reminder_id=made.reminder_id, agent=owner
    )
    assert cancelled.status == ReminderStatus.CANCELLED
    assert (
        await reminders.list_reminders(settings=settings, agent=owner, include_finished=False) == []
    )


async def test_bad_ids_and_unknown_agents_are_named(stack: Stack) -> None:
    settings = stack.settings()
    with pytest.raises(ReminderRefusedError, match="'nope' is not a reminder ID"):
        await reminders.cancel_reminder(settings=settings, reminder_id="nope")
    missing = "01J00000000000000000000000"
    with pytest.raises(ReminderRefusedError, match=f"there is no reminder {missing}$"):
        await reminders.show_reminder(settings=settings, reminder_id=missing)
    nobody = unique("nobody")
    with pytest.raises(UnknownAgentError, match=nobody):
        await reminders.list_reminders(settings=settings, agent=nobody, include_finished=True)
