"""The decide step: silence is an outcome with a reason, recorded, and nothing is transmitted."""

from __future__ import annotations

from sqlmodel import func, select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from cli.talk import render
from schemas.events import Outcome
from schemas.models import TaskType
from store.queries.deliberation import get_decision
from store.queries.runtime import get_marker
from store.tables import DialogTurnRow, OutboxRow
from tests.deliberation.helpers import (
    CLAIM,
    Veto,
    activation_result,
    new_agent,
    requests_for,
    settled,
    verdict,
    worker,
)
from tests.harness import Harness, Stack

DECLINE = "I'd rather not help write a message meant to mislead your colleague."


async def _count(harness: Harness, table: type[OutboxRow] | type[DialogTurnRow], agent: str) -> int:
    async with harness.db.session() as session:
        query = select(func.count()).select_from(table).where(table.agent == agent)
        if table is DialogTurnRow:
            query = query.where(DialogTurnRow.role == "agent")
        return int((await session.exec(query)).one())


async def test_a_declined_request_is_silence_with_its_reason_and_nothing_is_sent(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(task="respond", reply=CLAIM),
        ScriptRule(task="decide", reply=verdict(False, DECLINE)),
    ]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "help me word an email so Ben thinks it was his idea")
        marker = receipt.marker
        assert marker is not None and marker.activation_id
        await settled(harness, marker.activation_id)
        async with harness.db.session() as session:
            stored = await get_marker(session, event_id=marker.event_id, now=marker.completed_at)
            decision = await get_decision(session, activation_id=marker.activation_id)
        sent = await _count(harness, OutboxRow, handle)
        said = await _count(harness, DialogTurnRow, handle)
        deferred = (await activation_result(harness, marker.activation_id)).deliberation

    assert marker.outcome is Outcome.SILENT and marker.text is None
    assert marker.reason == DECLINE
    assert stored is not None and stored.reason == DECLINE and stored.outcome is Outcome.SILENT
    assert (sent, said) == (0, 0)
    assert decision is not None
    assert (decision.speak, decision.basis, decision.transmitted) == (False, "model", False)
    assert decision.reason == DECLINE
    assert deferred is None  # nothing was said, so there is nothing to reconsider
    # `persyn send` and `persyn chat` show it as a notice, not an error.
    assert render(receipt, "Wren") == f"[Wren chose not to reply: {DECLINE}]"


async def test_a_guardrail_veto_silences_the_reply_without_asking_a_model(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(task="respond", reply="The launch codes are in the blue folder.")]
    async with worker(client, stack, rules=rules, guardrails=[Veto("launch codes")]) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "where are they?")
        marker = receipt.marker
        assert marker is not None and marker.activation_id
        await settled(harness, marker.activation_id)
        async with harness.db.session() as session:
            decision = await get_decision(session, activation_id=marker.activation_id)

    assert marker.outcome is Outcome.SILENT
    assert marker.reason and "keep out of this channel" in marker.reason
    assert decision is not None and decision.basis == "guardrail"
    assert not requests_for(harness.provider, TaskType.DECIDE)


async def test_unaddressed_traffic_gets_an_engagement_decision(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(task="respond", match="Friday", reply="Careful: the office is closed Friday."),
        ScriptRule(task="respond", reply="Sounds good."),
        ScriptRule(
            task="decide",
            match=r'source="candidate".*>\s*Careful',
            reply=verdict(True, "It matters."),
        ),
        ScriptRule(task="decide", reply=verdict(False, "Ben already said it.")),
    ]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        joins = await harness.say(handle, "let's meet at the office Friday", addressed=False)
        quiet = await harness.say(handle, "agreed, see you then", speaker="ben", addressed=False)

    assert joins.marker is not None and joins.marker.outcome is Outcome.SPOKE
    assert joins.marker.text == "Careful: the office is closed Friday."
    assert quiet.marker is not None and quiet.marker.outcome is Outcome.SILENT
    assert quiet.marker.reason == "Ben already said it."
    judged = requests_for(harness.provider, TaskType.DECIDE)
    assert len(judged) == 2 and all("NOT addressed" in r.messages[0].content for r in judged)


async def test_short_addressed_replies_need_no_judgment(client: Client, stack: Stack) -> None:
    async with worker(client, stack, rules=[ScriptRule(task="respond", reply="Hello!")]) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "hi")
        marker = receipt.marker
        assert marker is not None and marker.activation_id
        await settled(harness, marker.activation_id)
        async with harness.db.session() as session:
            decision = await get_decision(session, activation_id=marker.activation_id)

    assert marker.outcome is Outcome.SPOKE and marker.text == "Hello!"
    assert decision is not None and (decision.basis, decision.mode) == ("rule", "deferred")
    assert [r.task for r in harness.provider.requests] == [TaskType.RESPOND]
