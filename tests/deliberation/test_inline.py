"""Inline deliberation through real agent turns: critics, refinement, and their failures."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import psycopg
from sqlmodel import select
from temporalio.client import Client

from activities.channels.stream import libpq_dsn, stream_channel
from activities.gateway.providers.scripted import ScriptRule
from schemas.events import Outcome
from schemas.models import TaskType
from store.queries.deliberation import get_decision
from store.tables import OutboxRow
from tests.deliberation.helpers import (
    CLAIM,
    CONFABULATION,
    HEDGED,
    INLINE,
    FakeMemory,
    claim_rules,
    new_agent,
    objections,
    requests_for,
    respond_prompt,
    settled,
    worker,
)
from tests.harness import Stack, event, terminal
from tests.memory.recall.records import add_channel, add_memory
from tests.observability.fakes import RecordingMeter

RECORDS: list[dict[str, Any]] = [
    {
        "id": "01JD3M6Z8Q4N1V5X7B2C9E0F1G",
        "summary": "I talked with Ada about the quarterly report; she asked for regional figures.",
        "band": "strong",
        "score": 0.81,
    },
    {
        "id": "01JD3M6Z8Q4N1V5X7B2C9E0F1H",
        "summary": "I may have mentioned a deadline to Ada, but the details are hazy.",
        "band": "weak",
        "score": 0.22,
    },
    {
        "id": "01JD3M6Z8Q4N1V5X7B2C9E0F1J",
        "summary": "Ada told me her cat is called Turnip.",
        "band": "moderate",
        "score": 0.45,
    },
]


def record_ids(text: str) -> set[str]:
    return set(re.findall(r"\[(01[0-9A-HJKMNP-TV-Z]{24})\]", text))


async def test_the_provenance_critic_sees_exactly_the_records_that_were_in_context(
    client: Client, stack: Stack
) -> None:
    memory = FakeMemory(RECORDS, shown=2)  # the third is listed but was cut from the prompt
    async with worker(
        client, stack, rules=claim_rules(), deliberation=INLINE, sources=[memory]
    ) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "what did we agree about the report?")
        assert receipt.marker is not None and receipt.marker.activation_id
        prompt = await respond_prompt(harness.db, receipt.marker.activation_id)

    assert RECORDS[0]["summary"] in prompt.system and RECORDS[2]["summary"] not in prompt.system
    [provenance] = [
        r for r in requests_for(harness.provider, TaskType.CRITIQUE) if "provenance" in r.system
    ]
    assert record_ids(provenance.system) == {RECORDS[0]["id"], RECORDS[1]["id"]}
    assert "(strong, 0.81) I talked with Ada about the quarterly report" in provenance.system
    assert "(weak, 0.22) I may have mentioned a deadline" in provenance.system
    assert "Turnip" not in provenance.system
    # The other critic was given no records: provenance is the provenance critic's job.
    others = [r for r in requests_for(harness.provider, TaskType.CRITIQUE) if r is not provenance]
    assert len(others) == 1 and not record_ids(others[0].system)
    # The refiner checks its remedy against the same records.
    [refine] = requests_for(harness.provider, TaskType.REFINE)
    assert record_ids(refine.system.split("The records you were shown:")[1]) == {
        RECORDS[0]["id"],
        RECORDS[1]["id"],
    }


async def test_with_the_real_memory_source_the_critic_sees_what_recall_surfaced(
    client: Client, stack: Stack
) -> None:
    async with worker(
        client, stack, rules=claim_rules(), deliberation=INLINE, encoder="none"
    ) as harness:
        handle = await new_agent(harness.db)
        channel_id = await add_channel(harness.db, handle, terminal())
        remembered = [
            await add_memory(
                harness.db,
                agent=handle,
                channel_id=channel_id,
                summary=summary,
                sensitivity="public",
            )
            for summary in (
                "I promised Ada a draft of the quarterly report with the regional figures.",
                "Ada and I compared notes on the quarterly report's charts.",
            )
        ]
        receipt = await harness.say(handle, "what did we agree about the quarterly report?")
        assert receipt.marker is not None and receipt.marker.activation_id
        prompt = await respond_prompt(harness.db, receipt.marker.activation_id)

    surfaced = {r["id"] for r in prompt.extra["memory"]["records"]}
    assert surfaced and surfaced <= set(remembered)  # recall found them, lexically
    [provenance] = [
        r for r in requests_for(harness.provider, TaskType.CRITIQUE) if "provenance" in r.system
    ]
    assert record_ids(provenance.system) == surfaced


async def test_a_claim_with_no_record_draws_an_objection_and_the_reply_hedges(
    client: Client, stack: Stack
) -> None:
    async with worker(client, stack, rules=claim_rules(), deliberation=INLINE) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "what did we agree about the report?")
        marker = receipt.marker
        assert marker is not None and marker.activation_id
        await settled(harness, marker.activation_id)
        async with harness.db.session() as session:
            sent = (await session.exec(select(OutboxRow).where(OutboxRow.agent == handle))).all()
            decision = await get_decision(session, activation_id=marker.activation_id)

    [provenance] = [
        r for r in requests_for(harness.provider, TaskType.CRITIQUE) if "provenance" in r.system
    ]
    assert "no memory was retrieved" in provenance.system  # nothing to rest the claim on
    assert CLAIM in provenance.messages[-1].content
    [refine] = requests_for(harness.provider, TaskType.REFINE)
    assert CLAIM in refine.system and CONFABULATION["explanation"] in refine.system
    assert "[confabulation, severity 8]" in refine.system
    # The refined, hedged reply is what the agent said; the confident claim never went out.
    assert marker.outcome is Outcome.SPOKE and marker.text == HEDGED
    assert [row.text for row in sent] == [HEDGED]
    assert decision is not None
    assert (decision.mode, decision.objections, decision.refined) == ("inline", 1, True)
    assert decision.lenses[0] == "provenance" and len(decision.lenses) == 2


async def test_malformed_critic_output_is_retried_then_the_turn_goes_on_without_it(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(task="respond", reply=CLAIM),
        ScriptRule(task="critique", reply='Sure! Objections: {"objections": [oops'),
        ScriptRule(task="decide", reply='{"speak": true, "reason": "Asked."}'),
    ]
    async with worker(client, stack, rules=rules, deliberation=INLINE) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "what did we agree?")

    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == CLAIM
    critiques = requests_for(harness.provider, TaskType.CRITIQUE)
    assert len(critiques) == 4  # two critics, each asked once more after an unusable answer
    retries = [r for r in critiques if len(r.messages) == 3]
    assert len(retries) == 2 and all("unusable" in r.messages[-1].content for r in retries)
    assert not requests_for(harness.provider, TaskType.REFINE)


async def test_huge_and_hostile_critic_output_is_bounded(client: Client, stack: Stack) -> None:
    flood = objections(
        *(
            {"type": "x" * 500, "span": "s" * 2_000, "explanation": "e" * 2_000, "severity": 99}
            for _ in range(200)
        )
    )
    rules = [
        ScriptRule(task="respond", reply=CLAIM),
        ScriptRule(task="critique", reply=f"```json\n{flood}\n```"),
        ScriptRule(task="refine", reply=HEDGED),
        ScriptRule(task="decide", reply='{"speak": true, "reason": "Asked."}'),
    ]
    async with worker(client, stack, rules=rules, deliberation=INLINE) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "what did we agree?")

    assert receipt.marker is not None and receipt.marker.text == HEDGED
    [refine] = requests_for(harness.provider, TaskType.REFINE)
    listed = re.findall(r"^\d+\. \[", refine.system, flags=re.MULTILINE)
    assert len(listed) == 2 * 8  # eight kept per critic (the default cap)
    assert len(refine.system) < 100_000


async def test_a_failing_critic_model_does_not_fail_the_turn(client: Client, stack: Stack) -> None:
    rules = [
        ScriptRule(task="respond", reply=CLAIM),
        ScriptRule(task="critique", fail="invalid"),  # not retryable: the call is refused
        ScriptRule(task="decide", reply='{"speak": true, "reason": "Asked."}'),
    ]
    async with worker(client, stack, rules=rules, deliberation=INLINE) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "what did we agree?")

    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == CLAIM and not receipt.marker.degraded


async def test_refinement_streams_as_the_revise_phase(client: Client, stack: Stack) -> None:
    async with worker(client, stack, rules=claim_rules(), deliberation=INLINE) as harness:
        handle = await new_agent(harness.db)
        ev = event("what did we agree about the report?").model_copy(update={"stream": True})
        payloads: list[dict[str, object]] = []
        async with await psycopg.AsyncConnection.connect(
            libpq_dsn(stack.dsn), autocommit=True
        ) as conn:
            await conn.execute(f'LISTEN "{stream_channel(ev.event_id)}"')

            async def collect() -> None:
                async for note in conn.notifies():
                    payloads.append(json.loads(note.payload))
                    if payloads[-1].get("phase") == "revise" and payloads[-1].get("done"):
                        return

            listening = asyncio.create_task(collect())
            receipt = await harness.send(handle, ev)
            await asyncio.wait_for(listening, 20)

    assert receipt.marker is not None and receipt.marker.text == HEDGED
    phases = [p["phase"] for p in payloads if "text" in p]
    assert phases.index("revise") > phases.index("draft")
    revised = "".join(str(p["text"]) for p in payloads if p["phase"] == "revise" and "text" in p)
    assert revised == HEDGED


async def test_critique_refinement_and_decision_are_metered_under_their_own_stages(
    client: Client, stack: Stack
) -> None:
    recorder = RecordingMeter()
    async with worker(
        client, stack, rules=claim_rules(), deliberation=INLINE, meters=[recorder]
    ) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "what did we agree about the report?")
        await recorder.wait_for(5)

    marker = receipt.marker
    assert marker is not None
    stages = sorted(r.stage for r in recorder.records if r.activation == marker.activation_id)
    assert stages == ["critique", "critique", "decide", "refine", "respond"]
    assert {r.conversation for r in recorder.records} == {marker.conversation_id}
