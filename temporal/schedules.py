"""Per-agent Temporal Schedules: ``maintenance/{handle}`` runs culling and retention.

The schedule is created with the agent (``persyn agent create``) and ensuring it again is a
no-op, so repeating a create, or calling this from anywhere else, never makes a second one.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
)

from contract import names
from contract.policies import BACKGROUND
from schemas.memory_formation import MaintenanceInput

"""The workflow type the schedule starts (``workflows.maintenance``)."""


def maintenance_schedule(handle: str, *, task_queue: str, every: timedelta) -> Schedule:
    """The schedule: one ``MaintenanceWorkflow`` every ``every``; a busy one skips a firing."""
    return Schedule(
        action=ScheduleActionStartWorkflow(
            names.MAINTENANCE_WORKFLOW,
            MaintenanceInput(agent=handle),
            id=names.maintenance_schedule_id(handle),
            task_queue=task_queue,
            typed_search_attributes=names.search_attributes(agent=handle),
            priority=BACKGROUND,
            static_summary=f"maintenance of agent {handle}: culling and retention",
        ),
        spec=ScheduleSpec(
            intervals=[ScheduleIntervalSpec(every=every)],
            # Agents created together should not all sweep the database at the same instant.
            jitter=min(every / 10, timedelta(minutes=5)),
        ),
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
        state=ScheduleState(note=f"culling and retention for agent {handle}"),
    )


async def ensure_maintenance_schedule(
    client: Client, *, handle: str, task_queue: str, every: timedelta = timedelta(hours=1)
) -> bool:
    """Create ``maintenance/{handle}`` unless it exists.

    Returns:
        Whether it was created now (``False``: it was already there, left as it is).
    """
    try:
        await client.create_schedule(
            names.maintenance_schedule_id(handle),
            maintenance_schedule(handle, task_queue=task_queue, every=every),
        )
    except ScheduleAlreadyRunningError:
        return False
    return True
