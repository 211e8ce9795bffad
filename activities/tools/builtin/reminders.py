"""Reminder tools: create, list, edit and cancel the agent's own reminders (never the heartbeat)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field
from temporalio import activity

from activities.scheduling.reminders import ReminderError, Reminders
from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.autonomy import ReminderPublic

_AT = (
    "When it fires, ISO 8601 (e.g. '2027-03-01T09:00:00+01:00'; without an offset it is read "
    "in your time zone). For a recurring reminder: when the recurrence starts."
)
_EVERY = "Repeat every so many minutes (at least the configured minimum)."
_CRON = "Repeat on a five-field cron schedule in your time zone, e.g. '0 9 * * MON-FRI'."


def _queue() -> str:
    # The reminder fires on the queue of the worker that set it.
    return activity.info().task_queue if activity.in_activity() else "persyn"


class ReminderList(BaseModel):
    """Reminders."""

    reminders: list[ReminderPublic]


class CreateReminderInput(ToolInput):
    """Input of ``create_reminder``: an objective and when (``at``, ``every_minutes`` or cron)."""

    objective: str = Field(description="What to do when it fires, in your own words.")
    at: datetime | None = Field(default=None, description=_AT)
    every_minutes: float | None = Field(default=None, description=_EVERY)
    cron: str | None = Field(default=None, description=_CRON)


class _ReminderTool(Tool):
    def __init__(self, deps: ToolDeps) -> None:
        assert deps.client is not None
        self._deps = deps
        self._reminders = Reminders(deps.db, deps.client, deps.settings.autonomy)


class CreateReminder(_ReminderTool):
    """Set a reminder."""

    name = "create_reminder"
    description = (
        "Set a reminder for yourself: at a time, or recurring. When it fires you are woken "
        "with the objective and act on it, with no one prompting you."
    )
    input_model = CreateReminderInput
    output_model = ReminderPublic

    async def run(self, call: ToolRun, args: CreateReminderInput) -> ReminderPublic:
        """Create it."""
        agent = call.context.agent
        try:
            return await self._reminders.create(
                agent=agent,
                objective=args.objective,
                now=call.now,
                task_queue=_queue(),
                at=args.at,
                every_minutes=args.every_minutes,
                cron=args.cron,
                timezone=await self._deps.timezone(agent),
                created_in=call.context.activation_id,
            )
        except ReminderError as err:
            raise ToolError(str(err)) from None


class ListRemindersInput(ToolInput):
    """Input of ``list_reminders``."""

    include_finished: bool = Field(default=False, description="Also done and cancelled ones.")


class ListReminders(_ReminderTool):
    """List the agent's reminders."""

    name = "list_reminders"
    description = "List the reminders you have set, with when each fires next."
    input_model = ListRemindersInput
    output_model = ReminderList

    async def run(self, call: ToolRun, args: ListRemindersInput) -> ReminderList:
        """List them."""
        found = await self._reminders.list(
            agent=call.context.agent, include_finished=args.include_finished
        )
        return ReminderList(reminders=found)


class EditReminderInput(ToolInput):
    """Input of ``edit_reminder``: what to change."""

    reminder_id: str = Field(description="The reminder's ID, from list_reminders.")
    objective: str | None = Field(default=None, description="A new objective.")
    at: datetime | None = Field(default=None, description=_AT)
    every_minutes: float | None = Field(default=None, description=_EVERY)
    cron: str | None = Field(default=None, description=_CRON)
    one_shot: bool = Field(
        default=False,
        description="Drop the recurrence: the reminder fires once more (at 'at', if given) "
        "and is then done.",
    )


class EditReminder(_ReminderTool):
    """Edit one of the agent's reminders."""

    name = "edit_reminder"
    description = (
        "Change one of your reminders: its objective, its time or recurrence, or make it one-shot."
    )
    input_model = EditReminderInput
    output_model = ReminderPublic

    async def run(self, call: ToolRun, args: EditReminderInput) -> ReminderPublic:
        """Edit it."""
        try:
            return await self._reminders.edit(
                agent=call.context.agent,
                reminder_id=args.reminder_id,
                now=call.now,
                objective=args.objective,
                at=args.at,
                every_minutes=args.every_minutes,
                cron=args.cron,
                one_shot=args.one_shot,
            )
        except ReminderError as err:
            raise ToolError(str(err)) from None


class CancelReminderInput(ToolInput):
    """Input of ``cancel_reminder``."""

    reminder_id: str = Field(description="The reminder's ID, from list_reminders.")


class CancelReminder(_ReminderTool):
    """Cancel one of the agent's reminders."""

    name = "cancel_reminder"
    description = "Cancel one of your reminders; it will not fire again."
    input_model = CancelReminderInput
    output_model = ReminderPublic

    async def run(self, call: ToolRun, args: CancelReminderInput) -> ReminderPublic:
        """Cancel it."""
        try:
            return await self._reminders.cancel(
                agent=call.context.agent, reminder_id=args.reminder_id, now=call.now
            )
        except ReminderError as err:
            raise ToolError(str(err)) from None


def reminder_tools(deps: ToolDeps) -> list[Tool]:
    """The reminder tools (none without a Temporal client)."""
    if deps.client is None:
        return []
    return [CreateReminder(deps), ListReminders(deps), EditReminder(deps), CancelReminder(deps)]
