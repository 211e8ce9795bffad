"""``DeliveryWorkflow``: one outbox row carried to its channel (``delivery/{row ulid}``).

Lifecycle: started once per row by the activity that wrote it (the reply's transmit, an
unprompted message) or by a worker's sweep of rows left pending, with ID reuse refused, so a row
never has two runs. On paced channels (agent to agent by default) ``channels.pace`` first lets
the message through its channel's budget and turn limit or blocks it for good, and says how
long to hold it (listening period, minimum interval, backoff when the exchange speeds up); the
run adds a random delay drawn with ``workflow.random()`` and waits on a durable timer. Then
``channels.deliver`` hands it to the adapter, retried with backoff (honouring an adapter's
``retry_after``) until the delivery's time is up; a delivery that gives up is recorded as
failed. The outcome is the run's ``PersynOutcome`` search attribute. No messages; a few
activities, so it never continues as new.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, FailureError

from contract import names
from contract.policies import DELIVERY_ATTEMPT, DELIVERY_STEP, summarized
from schemas.delivery import (
    DeliverInput,
    DeliveryInput,
    DeliveryResult,
    DeliveryStatus,
    PaceInput,
    SettleDeliveryInput,
)

with workflow.unsafe.imports_passed_through():
    from activities.channels.delivery import DeliveryActivities


@workflow.defn(name=names.DELIVERY_WORKFLOW)
class DeliveryWorkflow:
    """Pace, deliver and record one outbox message."""

    @workflow.run
    async def run(self, data: DeliveryInput) -> DeliveryResult:
        """Deliver the row once, or record why it was blocked or failed."""
        workflow.set_current_details(f"delivering {data.message_id} on {data.channel.key}")
        decision = await workflow.execute_activity_method(
            DeliveryActivities.pace,
            PaceInput(message_id=data.message_id),
            **summarized(DELIVERY_STEP, "pace the channel"),
        )
        if decision.blocked:
            return self._ended(data, DeliveryStatus.BLOCKED, decision.reason)
        delay = decision.wait_seconds + workflow.random().uniform(0.0, decision.jitter_seconds)
        if delay > 0:
            await workflow.sleep(timedelta(seconds=delay), summary="pacing")
        options = summarized(DELIVERY_ATTEMPT, f"deliver on {data.channel.service}")
        options["schedule_to_close_timeout"] = timedelta(seconds=data.give_up_seconds)
        try:
            attempt = await workflow.execute_activity_method(
                DeliveryActivities.deliver, DeliverInput(message_id=data.message_id), **options
            )
        except ActivityError as err:
            cause = err.cause
            reason = cause.message if isinstance(cause, FailureError) else str(err)
            settled = await workflow.execute_activity_method(
                DeliveryActivities.settle,
                SettleDeliveryInput(
                    message_id=data.message_id, status=DeliveryStatus.FAILED, reason=reason
                ),
                **summarized(DELIVERY_STEP, "record the failure"),
            )
            return self._ended(data, settled.status, reason)
        return self._ended(data, attempt.status, None)

    @staticmethod
    def _ended(data: DeliveryInput, status: DeliveryStatus, reason: str | None) -> DeliveryResult:
        workflow.upsert_search_attributes([names.OUTCOME.value_set(status.value)])
        workflow.set_current_details(f"{status.value}: {reason}" if reason else status.value)
        return DeliveryResult(message_id=data.message_id, status=status, reason=reason)
