"""Step of a conversation: an operator terminated its activation; record why.

A terminated run executes no more of its own code, so its parent records the ``failed``
outcome, with the reason the operator gave to the terminate request, in PostgreSQL and in the
completion marker the agent's waiting ``submit`` returns.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import names
from contract.policies import MESSAGE_PATH_DATABASE, READ_RUN, summarized_local
from schemas.activation import RecordOutcomeInput
from schemas.events import ChannelRef, CompletionMarker, Outcome, Trigger
from schemas.runs import Termination, TerminationQuery
from workflows.pipeline import metrics

with workflow.unsafe.imports_passed_through():
    from activities.runs import RunActivities
    from activities.store import StoreActivities

PATCH = "terminated-activation-reason"
"""Runs recorded earlier reported a terminated activation without reading its reason."""


async def record(
    marker: CompletionMarker, *, agent: str, trigger: Trigger, channel: ChannelRef
) -> CompletionMarker:
    """``marker`` with the operator's reason, recorded as the activation's outcome."""
    assert marker.activation_id is not None
    termination = Termination()
    try:
        termination = await workflow.execute_local_activity_method(
            RunActivities.termination,
            TerminationQuery(workflow_id=names.activation_workflow_id(marker.activation_id)),
            **summarized_local(READ_RUN, "read why the activation was terminated"),
        )
    except ActivityError as err:
        # Temporal unreachable for a moment: the marker still says it was terminated.
        workflow.logger.warning("termination reason not read: %s", err.cause or err)
    reason = f"the activation was {termination.describe()}"[:500]
    metrics.count_turn(Outcome.FAILED, trigger=trigger.value, channel_kind=channel.service)
    marker = marker.model_copy(update={"reason": reason})
    await workflow.execute_local_activity_method(
        StoreActivities.record_outcome,
        RecordOutcomeInput(agent=agent, trigger=trigger.value, marker=marker),
        **summarized_local(MESSAGE_PATH_DATABASE, "record the failed outcome"),
    )
    return marker
