"""On a plan without tools, "remind me to ... in 10 minutes" sets a reminder the person is sent.

The reminder is set at admission (``activities.asked_for``), before the prompt is built, so the
reply that answers the request knows it is done, and on a plan that confirms without the model
the reply says so itself. When it fires, the person is sent it on the channel they asked on,
once, however often the step that sends it runs (``activities.autonomy.for_person``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlmodel import select
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import ActivityEnvironment

from activities.asked_for import AskedFor, reminder_id_for
from activities.autonomy.firing import FiringActivities
from activities.gateway.providers.scripted import ScriptRule
from schemas.admission import AdmitInput
from schemas.autonomy import DeliverImpulseInput, FiringKind, ReminderStatus
from schemas.ids import new_ulid
from schemas.models import CallPlan, ProviderName, TaskType
from store.tables import OutboxRow
from store.tables.autonomy import ReminderRow
from temporal import schedules_autonomy as schedules
from tests.autonomy.conftest import fired_run, impulse_receipt
from tests.harness import Harness, Stack, event, running_worker, until

TINY = {ProviderName.SCRIPTED: CallPlan(offer_tools=False, confirm_done=True)}
RULES = [ScriptRule(task=TaskType.RESPOND.value, match="remind me", reply="Sure thing!")]


async def sent_to(harness: Harness, agent: str) -> list[tuple[str, str]]:
    async with harness.db.session() as session:
        rows = await session.exec(
            select(OutboxRow).where(OutboxRow.agent == agent, OutboxRow.unprompted)
        )
        return [(row.channel_key, row.text) for row in rows.all()]


async def test_a_reminder_asked_for_in_words_is_set_confirmed_and_sent_once(
    client: Client, stack: Stack
) -> None:
    async with running_worker(
        client, stack, rules=RULES, settings_overrides={"call_plans": TINY}
    ) as harness:
        agent = (await harness.create_agent()).handle
        before = datetime.now(UTC).replace(microsecond=0)  # reminders keep whole seconds
        asked = await harness.say(agent, "Please remind me to water the plants in 10 minutes.")
        assert asked.marker is not None and asked.marker.text is not None

        # Set before the prompt was built, for the person who asked, on their channel.
        reminder_id = reminder_id_for(asked.event_id)
        async with harness.db.session() as session:
            row = await session.get(ReminderRow, reminder_id)
        assert row is not None and row.status == ReminderStatus.ACTIVE.value
        assert row.objective == "water the plants" and row.for_channel == "terminal:tty"
        assert row.at is not None
        assert before + timedelta(minutes=10) <= row.at <= datetime.now(UTC) + timedelta(minutes=10)
        prompt = [r for r in harness.provider.requests if r.task is TaskType.RESPOND][-1]
        assert "Reminder set, as they asked" in prompt.system
        # The model said only "Sure thing!": the plan's reply says what was done.
        assert asked.marker.text.startswith("Sure thing!\n\nReminder set: at ")
        assert 'I will send you "water the plants" here.' in asked.marker.text

        # It fires (triggered now rather than awaited ten minutes): the person is sent it.
        schedule_id = schedules.reminder_schedule_id(reminder_id)
        await client.get_schedule_handle(schedule_id).trigger()
        fired = await fired_run(client, schedule_id)
        assert fired.delivered and fired.event_id is not None
        receipt = await impulse_receipt(harness, agent, fired.event_id)
        assert receipt.marker is not None
        impulse = harness.provider.last(TaskType.RESPOND).messages[-1].content
        assert "already sent to them on terminal:tty" in impulse

        async def delivered() -> bool:
            return await sent_to(harness, agent) == [
                ("terminal:tty", "Reminder, as you asked: water the plants")
            ]

        await until(delivered)
        # The sending step run again (a retried activity) sends nothing more.
        firing = FiringActivities(harness.db, client)
        again = DeliverImpulseInput(
            kind=FiringKind.REMINDER,
            agent=agent,
            event_id=fired.event_id,
            at=datetime.now(UTC),
            text="again",
        )
        await ActivityEnvironment().run(firing.deliver_impulse, again)
        assert await delivered()


async def test_a_reminder_it_cannot_set_is_said_so_and_nothing_is_kept(
    client: Client, stack: Stack
) -> None:
    async with running_worker(
        client, stack, rules=RULES, settings_overrides={"call_plans": TINY}
    ) as harness:
        agent = (await harness.create_agent()).handle
        asked = await harness.say(agent, "remind me to call Ines in 600 weeks")
        assert asked.marker is not None and asked.marker.text is not None
        assert asked.marker.text == (
            "Sure thing!\n\nI could not set that reminder: "
            "that is more than 3660 days ahead: choose a nearer time."
        )
        async with harness.db.session() as session:
            assert await session.get(ReminderRow, reminder_id_for(asked.event_id)) is None


async def test_a_plan_with_tools_leaves_the_reminder_to_the_model(
    client: Client, stack: Stack
) -> None:
    async with running_worker(client, stack, rules=RULES) as harness:
        agent = (await harness.create_agent()).handle
        asked = await harness.say(agent, "remind me to water the plants in 10 minutes")
        assert asked.marker is not None and asked.marker.text == "Sure thing!"
        async with harness.db.session() as session:
            assert await session.get(ReminderRow, reminder_id_for(asked.event_id)) is None


class FailingReminders:
    """Reminders whose schedule cannot be created (Temporal down mid-admission)."""

    async def create(self, **_: object) -> None:
        raise RPCError("connection refused", RPCStatusCode.UNAVAILABLE, b"")


async def test_a_reminder_that_fails_to_schedule_is_said_to_have_failed(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    failing: Any = FailingReminders()
    asked_for = AskedFor(harness.db, fact_limit=10, reminders=failing)
    data = AdmitInput(
        agent=agent,
        event=event("Remind me to drink my tea in 10 minutes."),
        conversation_id=new_ulid(),
        opening=True,
        activation_id=new_ulid(),
        at=datetime.now(UTC),
    )
    done = await ActivityEnvironment().run(asked_for.carry_out, data, new_ulid())

    assert [d.confirmation for d in done] == [
        "I could not set that reminder just now: please ask me again."
    ]
