"""Goals split as phi splits them, through real activations: the agent keeps a goal's progress,
cannot change what the goal is (its request reaches the operator), and a goal that has not
moved for the configured time shows as stalled."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from schemas.autonomy import GoalRequestStatus
from schemas.models import TaskType
from store.queries.goal_requests import decide, list_requests
from store.tables.autonomy import GoalRow
from store.tables.columns import utcnow
from tests.autonomy.conftest import autonomy_worker, tool_calls
from tests.harness import Harness, Stack

DONE = ScriptRule(task="respond", after_tool=True, reply="Done.")
STARS = {"description": "Learn the names of the stars", "title": "Stars", "kind": "interest"}


def calling(match: str, name: str, arguments: dict[str, Any]) -> ScriptRule:
    return ScriptRule(
        task="respond",
        match=match,
        after_tool=False,
        tool_calls=[ScriptToolCall(name=name, arguments=arguments)],
    )


async def results(harness: Harness, handle: str, text: str) -> list[Any]:
    receipt = await harness.say(handle, text)
    assert receipt.marker is not None
    calls = await tool_calls(harness, str(receipt.marker.activation_id))
    return [json.loads(str(c.result)) for c in calls]


async def goals_block(harness: Harness, handle: str, text: str = "How are you?") -> str:
    await harness.say(handle, text)
    system = harness.provider.last(TaskType.RESPOND).system
    return system.split("Your open goals", 1)[1].split("</material>", 1)[0]


async def test_the_agent_keeps_progress_and_asks_for_a_change_to_what_the_goal_is(
    client: Client, stack: Stack
) -> None:
    async with autonomy_worker(
        client, stack, rules=[calling("a goal", "create_goal", STARS), DONE]
    ) as harness:
        handle = (await harness.create_agent()).handle
        [goal] = await results(harness, handle, "Set yourself a goal.")
        goal_id = goal["goal_id"]
        assert (goal["title"], goal["kind"], goal["set_by"]) == ("Stars", "interest", "agent")

        change = {
            "goal_id": goal_id,
            "next_step": "Learn Orion's belt",
            "last_step": "Bought a star chart",
            "title": "Every star there is",
            "reason": "The chart has more than I thought.",
        }
        harness.provider.script.rules.insert(0, calling("progress", "update_goal", change))
        [updated] = await results(harness, handle, "Record your progress.")
        assert updated["goal"]["title"] == "Stars"  # unchanged: the operator's to decide
        assert updated["goal"]["next_step"] == "Learn Orion's belt"
        [asked] = updated["requested"]
        assert (asked["field"], asked["value"], asked["status"]) == (
            "title",
            "Every star there is",
            "pending",
        )

        block = await goals_block(harness, handle)
        assert "Stars: Learn the names of the stars (an interest)" in block
        assert "next step: Learn Orion's belt" in block and "Bought a star chart" in block
        assert "stalled" not in block

        # The request reaches the operator; approved, the goal is what was asked.
        async with harness.db.session() as session:
            [pending] = await list_requests(
                session, agent=handle, statuses=[GoalRequestStatus.PENDING]
            )
            assert pending.reason == "The chart has more than I thought."
            await decide(
                session,
                agent=handle,
                request_id=pending.request_id,
                approve=True,
                by="operator",
                at=utcnow(),
            )
            await session.commit()
        assert "Every star there is: Learn the names" in await goals_block(harness, handle)


async def test_a_goal_unmoved_past_the_stall_time_shows_as_stalled(
    client: Client, stack: Stack
) -> None:
    async with autonomy_worker(
        client, stack, rules=[calling("a goal", "create_goal", STARS), DONE]
    ) as harness:
        handle = (await harness.create_agent()).handle
        [goal] = await results(harness, handle, "Set yourself a goal.")
        ten_days_ago = utcnow() - timedelta(days=10)
        async with harness.db.session() as session:
            row = await session.get(GoalRow, goal["goal_id"])
            assert row is not None
            row.moved_at = ten_days_ago
            session.add(row)
            await session.commit()
        block = await goals_block(harness, handle)
        assert f"stalled: it has not moved since {ten_days_ago:%Y-%m-%d} (10 days)" in block

        # A step moves it: no longer stalled.
        step = {"goal_id": goal["goal_id"], "last_step": "Named Vega"}
        harness.provider.script.rules.insert(0, calling("progress", "update_goal", step))
        await results(harness, handle, "Record your progress.")
        assert "stalled" not in await goals_block(harness, handle)


async def test_a_bad_change_request_gets_one_line_and_files_nothing(
    client: Client, stack: Stack
) -> None:
    async with autonomy_worker(
        client, stack, rules=[calling("a goal", "create_goal", STARS), DONE]
    ) as harness:
        handle = (await harness.create_agent()).handle
        [goal] = await results(harness, handle, "Set yourself a goal.")
        bell = {"goal_id": goal["goal_id"], "title": "Stars\u0007"}
        harness.provider.script.rules.insert(0, calling("rename", "update_goal", bell))
        [refused] = await results(harness, handle, "rename it")
        assert refused["error"] == "title contains the control character U+0007: remove it"
        async with harness.db.session() as session:
            assert (
                await list_requests(session, agent=handle, statuses=list(GoalRequestStatus)) == []
            )
