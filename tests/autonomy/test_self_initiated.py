"""Self-initiated cognition on the time-skipping server: a beat assesses, sets a goal, and the
next activation sees it; the beat's conversation is its own, attributed, and closes when idle.

The schedule itself is not involved (the time-skipping server has none): the test starts
``HeartbeatWorkflow`` exactly as the schedule's action would.
"""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import select
from temporalio.testing import WorkflowEnvironment

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from contract import names
from contract.names import heartbeat_schedule_id
from schemas.autonomy import FiringInput, FiringResult
from schemas.models import TaskType
from store.tables import UsageRow
from store.tables.autonomy import AutonomyLogRow, GoalRow
from tests.autonomy.conftest import autonomy_worker, impulse_receipt
from tests.harness import Stack
from workflows.conversation import ConversationWorkflow
from workflows.heartbeat import HeartbeatWorkflow

ASSESSMENT = "You told Ada you would write her a poem, and you have not."
GOAL = "Write Ada the poem I promised"


async def test_a_heartbeat_that_creates_a_goal_sees_it_in_the_next_activation(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    rules = [
        ScriptRule(task="critique", system_match="during its heartbeat", reply=ASSESSMENT),
        ScriptRule(task="respond", after_tool=True, reply="I set myself a goal."),
        ScriptRule(
            task="respond",
            match="Heartbeat",
            tool_calls=[ScriptToolCall(name="create_goal", arguments={"description": GOAL})],
        ),
    ]
    async with autonomy_worker(skipping.client, stack, rules=rules) as harness:
        handle = (await harness.create_agent()).handle
        beat: FiringResult = await skipping.client.execute_workflow(
            HeartbeatWorkflow.run,
            FiringInput(agent=handle),
            id=f"{heartbeat_schedule_id(handle)}-manual",
            task_queue=harness.task_queue,
        )
        assert beat.delivered and beat.event_id is not None
        receipt = await impulse_receipt(harness, handle, beat.event_id)
        marker = receipt.marker
        assert marker is not None and marker.text == "I set myself a goal."
        # The beat acted on the self-assessment it was given.
        beat_round = next(
            r for r in harness.provider.requests if r.task.value == "respond" and r.tools
        )
        assert ASSESSMENT in beat_round.messages[-1].content

        # The next activation, on another channel, has the goal in its context.
        await harness.say(handle, "What are you up to these days?")
        latest = harness.provider.last(TaskType.RESPOND)
        assert GOAL in latest.system

        # The beat's conversation is its own, on the self-reflection channel, and closes when
        # idle like any other (a timer: skipped here).
        reflection = skipping.client.get_workflow_handle_for(
            ConversationWorkflow.run, names.conversation_workflow_id(str(marker.conversation_id))
        )
        await skipping.sleep(timedelta(minutes=31))
        closed = await reflection.result()
        assert (closed.channel_key, closed.reason) == ("self:reflection", "idle")

    # The usage ledger attributes the self-assessment to that conversation (meters flushed).
    async with harness.db.session() as session:
        usage = (
            await session.exec(select(UsageRow).where(UsageRow.activation == marker.activation_id))
        ).all()
        goals = (await session.exec(select(GoalRow).where(GoalRow.agent == handle))).all()
        log = await session.get(AutonomyLogRow, beat.event_id)
    assert {row.stage for row in usage} >= {"critique", "respond"}
    assert {row.conversation for row in usage} == {marker.conversation_id}
    assert {row.channel for row in usage} == {"self:reflection"}
    assert [g.description for g in goals] == [GOAL]
    assert log is not None and log.assessment == ASSESSMENT and log.template
