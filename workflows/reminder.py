"""``ReminderWorkflow``: one firing of a reminder the agent set (spec §4.7).

Lifecycle: started by the schedule ``reminder/{ulid}`` (its ID is that plus the firing time);
claims the firing (skipped if the reminder was cancelled, or the agent sleeps because its
heartbeat was deleted), delivers the objective to ``agent/{handle}`` as a reminder impulse on the
agent's reminders channel, and, for a one-shot reminder, marks it done and deletes its schedule.
It never waits for the activation and never continues as new.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import names
from contract.policies import TEMPORAL_CALL, summarized
from schemas.autonomy import FiringInput, FiringKind, FiringResult, RetireReminderInput
from workflows import firing

with workflow.unsafe.imports_passed_through():
    from activities.autonomy.firing import FiringActivities


@workflow.defn(name=names.REMINDER_WORKFLOW)
class ReminderWorkflow:
    """A reminder's firing, turned into an impulse."""

    @workflow.run
    async def run(self, data: FiringInput) -> FiringResult:
        """Claim the firing, wake the agent with the objective, retire a one-shot."""
        claimed = await firing.claim(FiringKind.REMINDER, data)
        result = await firing.deliver(FiringKind.REMINDER, data, claimed)
        if claimed.one_shot and data.reminder_id is not None:
            try:
                await workflow.execute_activity_method(
                    FiringActivities.retire_reminder,
                    RetireReminderInput(agent=data.agent, reminder_id=data.reminder_id),
                    **summarized(TEMPORAL_CALL, "retire the one-shot reminder"),
                )
            except ActivityError as err:
                # Its schedule had one action and spent it: it cannot fire again anyway.
                workflow.logger.warning("one-shot reminder not retired: %s", err.cause or err)
        return result
