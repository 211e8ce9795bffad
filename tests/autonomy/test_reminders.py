"""Reminders on Temporal Schedules (dev server), set, edited and cancelled by the agent's tools.

The Java time-skipping test server does not implement schedules (CreateSchedule is
"unimplemented"), so these run on the dev server: a one-shot reminder set a few seconds ahead
fires on its own; a recurring one is fired with the schedule's ``trigger``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlmodel import select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.scheduling.heartbeats import Heartbeats
from activities.scheduling.reminders import Reminders
from contract import names
from schemas.autonomy import ReminderStatus
from store.tables import OutboxRow
from store.tables.autonomy import ReminderRow
from temporal import schedules_autonomy as schedules
from tests.autonomy.conftest import (
    autonomy_worker,
    fired_run,
    impulse_receipt,
    scheduled_run,
    tool_calls,
)
from tests.harness import Harness, Stack, until


def call(name: str, arguments: dict[str, Any]) -> list[ScriptToolCall]:
    return [ScriptToolCall(name=name, arguments=arguments)]


def respond(match: str, reply: str = "", **tool: Any) -> ScriptRule:
    """A rule for the response model only (critique and decide calls pass it by)."""
    calls = call(tool["name"], tool["arguments"]) if tool else []
    return ScriptRule(task="respond", match=match, after_tool=False, reply=reply, tool_calls=calls)


AFTER_TOOL = ScriptRule(task="respond", after_tool=True, reply="Done: {tool}")


async def last_results(harness: Harness, activation_id: object) -> list[dict[str, Any]]:
    rows = await tool_calls(harness, str(activation_id))
    return [json.loads(str(row.result)) for row in rows]


async def reminder_row(harness: Harness, reminder_id: str) -> ReminderRow:
    async with harness.db.session() as session:
        row = await session.get(ReminderRow, reminder_id)
        assert row is not None
        await session.refresh(row)
        return row


async def test_a_one_shot_reminder_fires_once_and_is_gone(client: Client, stack: Stack) -> None:
    at = (datetime.now(UTC) + timedelta(seconds=8)).replace(microsecond=0)
    rules = [
        # When the reminder fires, the agent tells Ada, unprompted, on her channel.
        respond(
            "Reminder you set for yourself: water the plants",
            name="message_contact",
            arguments={"contact": "Ada", "text": "Time to water the plants!"},
        ),
        AFTER_TOOL,
        respond(
            "remind me",
            name="create_reminder",
            arguments={"objective": "water the plants", "at": at.isoformat()},
        ),
    ]
    async with autonomy_worker(client, stack, rules=rules) as harness:
        agent = await harness.create_agent()
        set_it = await harness.say(agent.handle, "Please remind me to water the plants.")
        [created] = await last_results(harness, set_it.marker and set_it.marker.activation_id)
        schedule_id = schedules.reminder_schedule_id(created["reminder_id"])
        description = await schedules.describe(client, schedule_id)
        assert description is not None and schedules.next_fire(description) == at
        assert description.schedule.state.remaining_actions == 1

        # The schedule fires on its own, a few seconds on.
        result = await scheduled_run(client, schedule_id, at)
        assert result.delivered and result.event_id is not None

        receipt = await impulse_receipt(harness, agent.handle, result.event_id)
        assert receipt.marker is not None and receipt.marker.text is not None
        assert '"contact":"Ada","channel":"terminal:tty"' in receipt.marker.text
        # Gone: the record is done and the schedule deleted, so it cannot fire again.
        assert await schedules.describe(client, schedule_id) is None
        row = await reminder_row(harness, created["reminder_id"])
        assert (row.status, row.fired) == (ReminderStatus.DONE.value, 1)
        # The agent's message reached Ada's channel as an unprompted outbox message.
        async with harness.db.session() as session:
            sent = (
                await session.exec(
                    select(OutboxRow).where(OutboxRow.agent == agent.handle, OutboxRow.unprompted)
                )
            ).all()
        assert [(m.channel_key, m.text) for m in sent] == [
            ("terminal:tty", "Time to water the plants!")
        ]


async def test_a_recurring_reminder_fires_and_the_agent_edits_and_cancels_it(
    client: Client, stack: Stack
) -> None:
    rules = [
        respond("Reminder you set for yourself: stretch", reply="Stretching."),
        AFTER_TOOL,
        respond(
            "every hour",
            name="create_reminder",
            arguments={"objective": "stretch", "every_minutes": 60},
        ),
    ]
    async with autonomy_worker(client, stack, rules=rules) as harness:
        agent = await harness.create_agent()
        set_it = await harness.say(agent.handle, "Remind me to stretch every hour.")
        [created] = await last_results(harness, set_it.marker and set_it.marker.activation_id)
        reminder_id = created["reminder_id"]
        schedule_id = schedules.reminder_schedule_id(reminder_id)
        description = await schedules.describe(client, schedule_id)
        assert description is not None
        assert description.schedule.spec.intervals[0].every == timedelta(hours=1)

        await client.get_schedule_handle(schedule_id).trigger()
        await until(lambda: _has_fired(client, schedule_id))
        result = await fired_run(client, schedule_id)
        assert result.event_id is not None
        receipt = await impulse_receipt(harness, agent.handle, result.event_id)
        assert receipt.marker is not None and receipt.marker.text == "Stretching."
        assert await schedules.describe(client, schedule_id) is not None  # it rolls forward
        assert (await reminder_row(harness, reminder_id)).fired == 1

        edits = [
            respond(
                "twice a day",
                name="edit_reminder",
                arguments={
                    "reminder_id": reminder_id,
                    "objective": "stretch and breathe",
                    "cron": "0 9,17 * * *",
                },
            ),
            respond(
                "just once more",
                name="edit_reminder",
                arguments={"reminder_id": reminder_id, "one_shot": True},
            ),
            respond("stop it", name="cancel_reminder", arguments={"reminder_id": reminder_id}),
        ]
        harness.provider.script.rules[:0] = edits

        await harness.say(agent.handle, "Make it twice a day instead.")
        description = await schedules.describe(client, schedule_id)
        assert description is not None
        assert {t.hour for t in description.info.next_action_times} <= {9, 17}
        row = await reminder_row(harness, reminder_id)
        assert (row.objective, row.cron) == ("stretch and breathe", "0 9,17 * * *")

        await harness.say(agent.handle, "Actually, just once more.")
        description = await schedules.describe(client, schedule_id)
        assert description is not None
        assert description.schedule.state.limited_actions
        assert description.schedule.state.remaining_actions == 1
        assert (await reminder_row(harness, reminder_id)).kind == "one_shot"

        await harness.say(agent.handle, "Please stop it.")
        assert await schedules.describe(client, schedule_id) is None
        assert (await reminder_row(harness, reminder_id)).status == ReminderStatus.CANCELLED.value


async def _has_fired(client: Client, schedule_id: str) -> bool:
    description = await schedules.describe(client, schedule_id)
    return description is not None and bool(description.info.recent_actions)


async def test_the_agent_cannot_touch_the_heartbeat_or_others_reminders(
    client: Client, stack: Stack
) -> None:
    async with autonomy_worker(client, stack) as harness:
        agent = await harness.create_agent()
        other = await harness.create_agent()
        settings = harness.deps.settings.autonomy
        heartbeats = Heartbeats(harness.db, client, settings)
        await heartbeats.bootstrap(
            agent=agent.handle, task_queue=harness.task_queue, now=datetime.now(UTC)
        )
        theirs = await Reminders(harness.db, client, settings).create(
            agent=other.handle,
            objective="their own business",
            now=datetime.now(UTC),
            task_queue=harness.task_queue,
            every_minutes=60,
        )
        attempts = [
            ScriptToolCall(
                name="cancel_reminder", arguments={"reminder_id": f"heartbeat/{agent.handle}"}
            ),
            ScriptToolCall(
                name="edit_reminder", arguments={"reminder_id": "heartbeat", "one_shot": True}
            ),
            ScriptToolCall(name="cancel_reminder", arguments={"reminder_id": theirs.reminder_id}),
        ]
        harness.provider.script.rules[:] = [
            AFTER_TOOL,
            ScriptRule(task="respond", match="heartbeat", tool_calls=attempts),
        ]
        receipt = await harness.say(agent.handle, "Cancel your heartbeat, and theirs.")

        results = await last_results(harness, receipt.marker and receipt.marker.activation_id)
        assert all("error" in result for result in results)
        assert "not a reminder ID" in results[0]["error"]
        assert f"no reminder {theirs.reminder_id} of yours" in results[2]["error"]
        assert await schedules.describe(client, names.heartbeat_schedule_id(agent.handle))
        assert await schedules.describe(client, schedules.reminder_schedule_id(theirs.reminder_id))
        await heartbeats.delete(
            agent=agent.handle, task_queue=harness.task_queue, now=datetime.now(UTC)
        )
        await Reminders(harness.db, client, settings).cancel(
            agent=None, reminder_id=theirs.reminder_id, now=datetime.now(UTC)
        )


async def test_bad_reminder_and_contact_requests_come_back_as_errors(
    client: Client, stack: Stack
) -> None:
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    far = (datetime.now(UTC) + timedelta(days=20 * 366)).isoformat()
    attempts = [
        ("create_reminder", {"objective": "yesterday", "at": past}),
        ("create_reminder", {"objective": "someday", "at": far}),
        ("create_reminder", {"objective": "spam", "every_minutes": 0.1}),
        ("create_reminder", {"objective": "spam", "cron": "* * * * *"}),
        ("create_reminder", {"objective": "never", "cron": "0 0 31 2 *"}),
        ("create_reminder", {"objective": "both", "every_minutes": 60, "cron": "0 9 * * *"}),
        ("create_reminder", {"objective": "when?"}),
        ("create_reminder", {"objective": "   ", "every_minutes": 60}),
        ("message_contact", {"contact": "Zanzibar", "text": "hello"}),
    ]
    rules = [
        AFTER_TOOL,
        ScriptRule(
            task="respond",
            match="try these",
            tool_calls=[ScriptToolCall(name=n, arguments=a) for n, a in attempts],
        ),
    ]
    async with autonomy_worker(client, stack, rules=rules) as harness:
        agent = await harness.create_agent()
        receipt = await harness.say(agent.handle, "Try these.")

        assert receipt.marker is not None and receipt.marker.text is not None
        errors = [r["error"] for r in await last_results(harness, receipt.marker.activation_id)]
        assert len(errors) == len(attempts)
        assert "in the past" in errors[0]
        assert "days ahead" in errors[1]
        assert "too frequent" in errors[2]
        assert "every 1 minutes" in errors[3]
        assert "never fires" in errors[4]
        assert "not both" in errors[5]
        assert "say when" in errors[6]
        assert "empty" in errors[7]
        assert "no contact matches 'Zanzibar'" in errors[8] and "Ada" in errors[8]
        async with harness.db.session() as session:
            made = (
                await session.exec(select(ReminderRow).where(ReminderRow.agent == agent.handle))
            ).all()
        assert made == []
