"""Reads Temporal's record of a run for the orchestration: why an operator terminated it.

A parent learns only *that* a child was terminated; the operator's reason sits in the child's
own history. Reading it is I/O, so it is an activity.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistoryEventFilterType

from schemas.runs import Termination, TerminationQuery


class RunActivities:
    """Look-ups on workflow runs, through a Temporal client."""

    def __init__(self, client: Client | None) -> None:
        """Args: client: The worker's client (``None``: every look-up answers "unknown")."""
        self._client = client

    @activity.defn(name="runs.termination")
    async def termination(self, data: TerminationQuery) -> Termination:
        """The reason and identity of the terminate request that ended a run."""
        if self._client is None:
            return Termination()
        handle = self._client.get_workflow_handle(data.workflow_id, run_id=data.run_id)
        # Only the close event is asked for: a long run's history is never read whole.
        events = handle.fetch_history_events(
            event_filter_type=WorkflowHistoryEventFilterType.CLOSE_EVENT
        )
        async for event in events:
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
                attributes = event.workflow_execution_terminated_event_attributes
                return Termination(
                    reason=attributes.reason or None, identity=attributes.identity or None
                )
        return Termination()
