"""`persyn down` first asks each open conversation to remember now (``usecases.remembering``)."""

from __future__ import annotations

from temporalio.client import Client

from contract import names
from schemas.conversation import RememberNow, RememberNowResult
from schemas.memory_formation import ConsolidationResult
from tests.harness import Stack, until
from tests.memory.formation.helpers import (
    consolidation_ids,
    formation_rules,
    formation_worker,
    new_agent,
    records_of,
)
from usecases.remembering import remember_open_conversations


async def test_an_open_conversation_remembers_as_of_the_stop_and_goes_on(
    client: Client, stack: Stack
) -> None:
    async with formation_worker(
        client, stack, rules=formation_rules(), settings_overrides={"encoder": "none"}
    ) as harness:
        agent = await new_agent(harness.db)  # idle for 30 minutes: it stays open
        first = await harness.say(agent, "My sister's name is Ines.")
        await harness.say(agent, "She lives in Porto.")
        assert first.marker and first.marker.conversation_id
        conversation = first.marker.conversation_id
        assert await records_of(harness.db, agent) == []  # nothing formed before the stop

        asked = await remember_open_conversations(harness.deps.settings, timeout_s=60, agent=agent)
        assert (asked.started, asked.nothing, asked.unanswered) == ([conversation], [], [])
        [started] = await consolidation_ids(client, conversation)
        formed = await client.get_workflow_handle(started, result_type=ConsolidationResult).result()
        assert len(formed.formed) == 1
        [record] = await records_of(harness.db, agent)
        assert record.id == formed.formed[0]

        # Asked again with nothing said since, nothing more forms.
        again = await remember_open_conversations(harness.deps.settings, timeout_s=60, agent=agent)
        assert (again.started, again.nothing) == ([], [conversation])

        # The conversation goes on; what is said next is remembered next time.
        later = await harness.say(agent, "And her cat is called Biscuit.")
        assert later.marker and later.marker.conversation_id == conversation
        handle = client.get_workflow_handle(names.conversation_workflow_id(conversation))
        third: RememberNowResult = await handle.execute_update(
            names.REMEMBER_NOW, RememberNow(reason="a test"), result_type=RememberNowResult
        )
        assert third.started

        async def two_formed() -> bool:
            return len(await records_of(harness.db, agent)) == 2

        await until(two_formed)


async def test_a_malformed_ask_fails_the_update_naming_the_field(
    client: Client, stack: Stack
) -> None:
    async with formation_worker(
        client, stack, rules=formation_rules(), settings_overrides={"encoder": "none"}
    ) as harness:
        agent = await new_agent(harness.db)
        said = await harness.say(agent, "Hello there.")
        assert said.marker and said.marker.conversation_id
        handle = client.get_workflow_handle(
            names.conversation_workflow_id(said.marker.conversation_id)
        )
        try:
            await handle.execute_update(names.REMEMBER_NOW, {"reason": ""})
        except Exception as err:
            assert "reason" in str(err.__cause__ or err)
        else:
            raise AssertionError("an empty reason was accepted")
