"""Deferred deliberation (the default): transmit first, reconsider in the background, and weave
the conclusion into the agent's next turn on the channel, even after the conversation closed."""

from __future__ import annotations

from temporalio.client import Client

from activities.gateway.providers.scripted import Script, ScriptRule
from contract import names
from schemas.events import Outcome
from schemas.models import TaskType
from store.queries.deliberation import parked_for
from temporal import inbox
from tests.deliberation.helpers import (
    CLAIM,
    CONFABULATION,
    HEDGED,
    GatedProvider,
    claim_rules,
    deferred_conclusion,
    new_agent,
    requests_for,
    respond_prompt,
    settled,
    verdict,
    worker,
)
from tests.harness import Stack, until
from tests.workflows.gates import history, signals_received
from workflows.conversation import ConversationWorkflow


async def test_the_conclusion_reaches_the_next_turn_after_the_conversation_closed(
    client: Client, stack: Stack
) -> None:
    # The critics wait until the test lets them go: the reply is transmitted while they wait,
    # and they conclude only after the conversation has closed.
    provider = GatedProvider(Script(rules=claim_rules()), TaskType.CRITIQUE)
    async with worker(client, stack, provider=provider) as harness:
        try:
            handle = await new_agent(harness.db, idle_minutes=0.02)
            first = await harness.say(handle, "what did we agree about the report?")
            assert first.marker is not None and first.marker.activation_id
            assert first.marker.outcome is Outcome.SPOKE
            assert first.marker.text == CLAIM  # the fast candidate, not yet reconsidered
            assert not requests_for(provider, TaskType.CRITIQUE)  # no critic ran before it

            conversation = harness.client.get_workflow_handle_for(
                ConversationWorkflow.run,
                names.conversation_workflow_id(str(first.marker.conversation_id)),
            )
            assert (await conversation.result()).reason == "idle"
        finally:
            provider.gate.set()
        result = await deferred_conclusion(harness, first.marker.activation_id)
        assert result.parked_id is not None and result.deliberated.text == HEDGED

        second = await harness.say(handle, "so, anything else?")
        third = await harness.say(handle, "and now?")
        assert second.marker is not None and second.marker.activation_id
        assert third.marker is not None and third.marker.activation_id
        await settled(harness, second.marker.activation_id)
        woven = await respond_prompt(harness.db, second.marker.activation_id)
        later = await respond_prompt(harness.db, third.marker.activation_id)
        async with harness.db.session() as session:
            parked = await parked_for(session, activation_id=first.marker.activation_id)

    assert second.marker.conversation_id != first.marker.conversation_id  # a new conversation
    assert "Second thoughts" in woven.system
    assert HEDGED in woven.system and CONFABULATION["explanation"] in woven.system
    assert parked is not None and parked.consumed_by == second.marker.activation_id
    assert "Second thoughts" not in later.system  # consumed once, not repeated
    assert later.activation_id == third.marker.activation_id


async def test_a_silent_turn_leaves_the_conclusion_for_the_next_spoken_one(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(
            task="decide",
            match="latest message was NOT addressed",
            reply=verdict(False, "Not my business."),
        ),
        *claim_rules(),
    ]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        first = await harness.say(handle, "what did we agree about the report?")
        assert first.marker is not None and first.marker.activation_id
        await deferred_conclusion(harness, first.marker.activation_id)

        aside = await harness.say(handle, "bystanders chatting", addressed=False)
        spoken = await harness.say(handle, "back to you: anything else?")
        assert aside.marker is not None and aside.marker.activation_id
        assert spoken.marker is not None and spoken.marker.activation_id
        await settled(harness, spoken.marker.activation_id)
        async with harness.db.session() as session:
            parked = await parked_for(session, activation_id=first.marker.activation_id)
        seen_silently = await respond_prompt(harness.db, aside.marker.activation_id)

    assert aside.marker.outcome is Outcome.SILENT and aside.marker.reason == "Not my business."
    assert "Second thoughts" in seen_silently.system  # it was shown, but nothing was said
    assert parked is not None and parked.consumed_by == spoken.marker.activation_id


async def test_nothing_is_parked_when_the_critics_have_no_objection(
    client: Client, stack: Stack
) -> None:
    rules = claim_rules(provenance_reply='{"objections": []}')
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        receipt = await harness.say(handle, "what did we agree about the report?")
        assert receipt.marker is not None and receipt.marker.activation_id
        result = await deferred_conclusion(harness, receipt.marker.activation_id)

    assert result.parked_id is None and not result.deliberated.objections
    assert not requests_for(harness.provider, TaskType.REFINE)


async def test_an_activation_ended_while_it_reconsiders_leaves_its_answer_standing(
    client: Client, stack: Stack
) -> None:
    # The critics wait; the activation is terminated while they do, after its reply went out.
    provider = GatedProvider(Script(rules=claim_rules()), TaskType.CRITIQUE)
    async with worker(client, stack, provider=provider) as harness:
        try:
            handle = await new_agent(harness.db)
            first = await harness.say(handle, "what did we agree about the report?")
            marker = first.marker
            assert marker is not None and marker.activation_id and marker.conversation_id
            assert marker.outcome is Outcome.SPOKE
            activation = harness.client.get_workflow_handle(
                names.activation_workflow_id(marker.activation_id)
            )

            async def reconsidering() -> bool:
                pending = (await activation.describe()).raw_description.pending_activities
                return any(a.activity_type.name == "deliberation.critique" for a in pending)

            await until(reconsidering)
            await activation.terminate("the operator ends it")

            # The event stays answered as it was, and the agent goes on answering.
            answer = await inbox.marker(harness.client, handle=handle, event_id=marker.event_id)
            second = await harness.say(handle, "still there?")
        finally:
            provider.gate.set()
        conversation = names.conversation_workflow_id(marker.conversation_id)
        told = signals_received(
            await history(harness.client, conversation), names.EXCHANGE_DONE, marker.activation_id
        )

    assert answer.marker is not None and answer.marker.outcome is Outcome.SPOKE
    assert answer.marker.text == CLAIM
    assert second.marker is not None and second.marker.outcome is Outcome.SPOKE
    assert len(told) == 1  # its conversation heard how the exchange ended once, not twice
