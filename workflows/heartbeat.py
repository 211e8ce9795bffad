"""``HeartbeatWorkflow``: one beat of an agent's idle cognition (spec §4.7).

Lifecycle: started by the schedule ``heartbeat/{handle}`` (its ID is that plus the firing
time); claims the firing (skipped if the heartbeat was deleted meanwhile) and delivers a
heartbeat impulse to ``agent/{handle}`` on the agent's self-reflection channel, then ends. The
agent runs the beat as an ordinary activation there: a self-assessment, then action through its
tools. It never waits for the activation and never continues as new.
"""

from __future__ import annotations

from temporalio import workflow

from contract import names
from schemas.autonomy import FiringInput, FiringKind, FiringResult
from workflows import firing


@workflow.defn(name=names.HEARTBEAT_WORKFLOW)
class HeartbeatWorkflow:
    """A heartbeat's firing, turned into an impulse."""

    @workflow.run
    async def run(self, data: FiringInput) -> FiringResult:
        """Claim the beat and wake the agent with it."""
        claimed = await firing.claim(FiringKind.HEARTBEAT, data)
        return await firing.deliver(FiringKind.HEARTBEAT, data, claimed)
