"""A stretch in which someone asked to be remembered forms an important memory, however rated."""

from __future__ import annotations

from typing import Any

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from activities.memory.explicit import ASKED_IMPORTANCE
from tests.harness import Stack
from tests.memory.formation.helpers import (
    RATING_SYSTEM,
    close_and_consolidate,
    formation_requests,
    formation_rules,
    formation_worker,
    new_agent,
    records_of,
    row,
)


async def formed(
    client: Client, stack: Stack, rules: list[ScriptRule], said: str
) -> tuple[int, dict[str, Any]]:
    async with formation_worker(
        client, stack, rules=rules, settings_overrides={"encoder": "none"}
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.02)
        receipt = await harness.say(agent, said)
        assert receipt.marker and receipt.marker.conversation_id
        (result,) = await close_and_consolidate(harness.client, receipt.marker.conversation_id)
        assert len(result.formed) == 1 and not result.failed
        (record,) = await records_of(harness.db, agent)
        kept = await row(harness.db, "SELECT rubric FROM memory_records WHERE id = :r", r=record.id)
        assert formation_requests(harness.provider, "rate")
        return record.importance, kept.rubric


async def test_a_low_rating_is_raised_when_someone_asked_to_be_remembered(
    client: Client, stack: Stack
) -> None:
    importance, rubric = await formed(
        client, stack, formation_rules(importance=1), "Please remember that my sister is Ines."
    )
    assert importance == ASKED_IMPORTANCE
    assert rubric["rated"] == 1 and rubric["asked_to_remember"] == ["My sister is Ines"]


async def test_an_unreadable_rating_does_not_lose_a_memory_someone_asked_for(
    client: Client, stack: Stack
) -> None:
    broken = ScriptRule(task="rate", system_match=RATING_SYSTEM, reply="I rate it highly!")
    importance, rubric = await formed(
        client, stack, [broken, *formation_rules()], "Please remember that my sister is Ines."
    )
    assert importance == ASKED_IMPORTANCE and "does not fit its schema" in rubric["unrated"]


async def test_without_a_request_the_rating_stands(client: Client, stack: Stack) -> None:
    importance, rubric = await formed(
        client, stack, formation_rules(importance=2), "My sister is Ines."
    )
    assert importance == 2 and "asked_to_remember" not in rubric
