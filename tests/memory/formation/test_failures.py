"""Failing model calls: retried; a range that cannot form keeps its dialog and forms later."""

from __future__ import annotations

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from tests.harness import Stack
from tests.memory.formation.helpers import (
    RATING_SYSTEM,
    SUMMARY_SYSTEM,
    close_and_consolidate,
    formation_requests,
    formation_rules,
    formation_worker,
    new_agent,
    records_of,
    row,
    rows,
)


async def test_failed_model_calls_are_retried_and_the_memory_still_forms(
    client: Client, stack: Stack
) -> None:
    flaky = [
        ScriptRule(task="summarize", system_match=SUMMARY_SYSTEM, fail="server", times=2),
        ScriptRule(task="rate", system_match=RATING_SYSTEM, fail="rate_limit", times=1),
    ]
    async with formation_worker(
        client, stack, rules=[*flaky, *formation_rules()], settings_overrides={"encoder": "none"}
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.02)
        receipt = await harness.say(agent, "Remember that I take my tea without sugar.")
        assert receipt.marker and receipt.marker.conversation_id
        (result,) = await close_and_consolidate(harness.client, receipt.marker.conversation_id)
        assert len(result.formed) == 1 and not result.failed
        assert len(formation_requests(harness.provider, "summarize")) == 3  # two failures
        assert len(formation_requests(harness.provider, "rate")) == 2  # one failure
        (record,) = await records_of(harness.db, agent)
        assert record.id == result.formed[0]


async def test_a_range_that_cannot_form_keeps_its_dialog_and_is_picked_up_later(
    client: Client, stack: Stack
) -> None:
    broken = ScriptRule(task="summarize", system_match=SUMMARY_SYSTEM, fail="invalid")
    async with formation_worker(
        client,
        stack,
        rules=[broken, *formation_rules()],
        settings_overrides={"encoder": "none"},
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.02)
        first = await harness.say(agent, "My sister's name is Ines.")
        assert first.marker and first.marker.conversation_id
        assert first.marker.text == "My sister's name is Ines."  # the reply is unaffected
        lost = first.marker.conversation_id
        (failed,) = await close_and_consolidate(harness.client, lost)
        assert failed.formed == [] and len(failed.failed) == 1
        assert await records_of(harness.db, agent) == []
        dialog = await rows(
            harness.db, "SELECT text FROM dialog_turns WHERE conversation_id = :c", c=lost
        )
        assert [d.text for d in dialog] == ["My sister's name is Ines."] * 2  # intact
        ledger = await row(
            harness.db,
            "SELECT status, error, turns FROM memory_formations WHERE id = :id",
            id=failed.failed[0],
        )
        assert ledger.status == "failed" and "invalid" in ledger.error and ledger.turns == 2

        # The model recovers; the next conversation's consolidation picks the range up.
        harness.provider.script.rules.remove(broken)
        second = await harness.say(agent, "And my brother is called Tomas.")
        assert second.marker and second.marker.conversation_id
        assert second.marker.conversation_id != lost
        (picked,) = await close_and_consolidate(harness.client, second.marker.conversation_id)
        assert len(picked.formed) == 2 and not picked.failed

        older, newer = await records_of(harness.db, agent)
        assert older.conversation_id == lost and newer.conversation_id != lost
        derived = await row(
            harness.db, "SELECT derived_from FROM memory_records WHERE id = :id", id=newer.id
        )
        # Formed oldest first, so the later memory forms beside the recovered one.
        assert derived.derived_from == [older.id]
        ledger = await row(
            harness.db,
            "SELECT status, attempts, record_id FROM memory_formations WHERE id = :id",
            id=failed.failed[0],
        )
        assert (ledger.status, ledger.attempts, ledger.record_id) == ("done", 2, older.id)
