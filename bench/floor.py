"""The minimal one-activity workflow: the per-round floor of the server in the same run."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow


@activity.defn(name="bench.noop")
async def noop(value: int) -> int:
    """Does nothing."""
    return value


@workflow.defn(name="BenchFloorWorkflow")
class FloorWorkflow:
    """Start, one activity, complete: two workflow-task rounds."""

    @workflow.run
    async def run(self, value: int) -> int:
        """Run the single activity."""
        return await workflow.execute_activity(
            noop, value, start_to_close_timeout=timedelta(seconds=10)
        )
