"""A conversation keeps one idle timer across its exchanges (time-skipping server).

In a module of its own: the time-skipping server's clock is global to its environment, and a
conversation another test left open would hold it (its worker gone, its timer due).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.testing import WorkflowEnvironment

from contract import names
from schemas.conversation import WindowAnswer, WindowQuery
from tests.harness import Stack, running_worker
from workflows.conversation import ConversationWorkflow


async def test_a_busy_conversation_keeps_one_idle_timer_and_closes_idle_after_its_last_news(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    async with running_worker(skipping.client, stack) as harness:
        agent = await harness.create_agent()  # idle after 30 minutes
        first = await harness.say(agent.handle, "hello")
        assert first.marker is not None
        talk = skipping.client.get_workflow_handle_for(
            ConversationWorkflow.run,
            names.conversation_workflow_id(str(first.marker.conversation_id)),
        )
        await skipping.sleep(timedelta(minutes=20))
        await harness.say(agent.handle, "again")
        await harness.say(agent.handle, "and again")

        # 35 minutes after the first news, 15 after the last: the timer the first wait
        # started has fired, and the conversation is still open.
        await skipping.sleep(timedelta(minutes=15))
        window = await talk.query(names.WINDOW, WindowQuery(), result_type=WindowAnswer)
        assert len(window.window) == 6
        last = window.window[-1].at

        await skipping.sleep(timedelta(minutes=16))
        closed = await talk.result()
        assert closed.reason == "idle"
        assert timedelta(minutes=30) <= closed.closed_at - last < timedelta(minutes=31)
        events = (await talk.fetch_history()).events
        timers = [e.event_type for e in events if e.HasField("timer_started_event_attributes")]
        cancelled = [e for e in events if e.HasField("timer_canceled_event_attributes")]
        # One timer for the first idle period, one more for what was left of it after the
        # later news: none started and cancelled per exchange.
        assert (len(timers), len(cancelled)) == (2, 0)
