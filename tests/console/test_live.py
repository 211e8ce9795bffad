"""The console's live cognition, driven by Textual's pilot against the real stack.

Streaming, revision, withdrawal with the stated reason, tool indicators, woven conclusions and
unprompted messages, each as the operator sees it in the transcript.
"""

from __future__ import annotations

from datetime import UTC, datetime

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from schemas.events import Outcome
from schemas.ids import new_ulid
from store.queries.runtime import add_outbox
from tests.console.helpers import SIZE, console, send, settled
from tests.deliberation.helpers import (
    CLAIM,
    HEDGED,
    INLINE,
    claim_rules,
    new_agent,
    verdict,
    worker,
)
from tests.harness import Stack, until


async def test_a_reply_streams_into_a_draft_then_is_committed(client: Client, stack: Stack) -> None:
    rules = [ScriptRule(task="respond", reply="Hello there, said slowly and in pieces.")]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hello")
            await settled(app)
            [turn] = app.transcript.turns()
            [you] = app.transcript.lines("you")

    assert you.text == "Ada> hello"
    assert turn.outcome is Outcome.SPOKE
    assert turn.draft == "Hello there, said slowly and in pieces."  # streamed, piece by piece
    assert turn.text == "Hello there, said slowly and in pieces."
    assert app.composer.text == "" and app.composer.sent_texts == ["hello"]


async def test_the_revision_replaces_the_draft_visibly(client: Client, stack: Stack) -> None:
    async with worker(client, stack, rules=claim_rules(), deliberation=INLINE) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "what did we agree about the report?")
            await until(lambda: app.transcript.turns() and app.transcript.turns()[0].revised)
            await settled(app)
            [turn] = app.transcript.turns()

    assert turn.revised and turn.phase == "revise"
    assert turn.text == HEDGED and turn.draft == HEDGED


async def test_a_silenced_draft_is_withdrawn_for_the_stated_reason(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(task="respond", reply=CLAIM),  # substantive: the decide model judges it
        ScriptRule(task="decide", reply=verdict(False, "Ben already said it.")),
    ]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "anything to add?")
            await settled(app)
            [turn] = app.transcript.turns()

    assert turn.outcome is Outcome.SILENT
    assert turn.text == "[Wren chose not to reply: Ben already said it.]"


async def test_a_tool_call_shows_as_an_indicator_with_its_status(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(
            task="respond",
            after_tool=False,
            tool_calls=[ScriptToolCall(name="calculate", arguments={"expression": "6*7"})],
        ),
        ScriptRule(task="respond", after_tool=True, reply="It is {tool}."),
    ]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "what is six times seven?")
            await settled(app)
            [turn] = app.transcript.turns()

    assert list(turn.calls.values()) == ["✓ calculate"]
    assert turn.outcome is Outcome.SPOKE and "42" in turn.text


async def test_unprompted_messages_arrive_while_the_console_is_open(
    client: Client, stack: Stack
) -> None:
    async with worker(client, stack) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle, channel="unprompted")
        async with app.run_test(size=SIZE):
            await until(lambda: app.listening)
            async with harness.db.session() as session:
                await add_outbox(
                    session,
                    message_id=new_ulid(),
                    activation_id=new_ulid(),
                    agent=handle,
                    channel_key="terminal:unprompted",
                    conversation_id=None,
                    text_="a reminder: stand-up at ten",
                    created_at=datetime.now(UTC),
                    unprompted=True,
                )
            await until(lambda: app.transcript.lines("unprompted"))
            [line] = app.transcript.lines("unprompted")

    assert line.text == "Wren (unprompted)> a reminder: stand-up at ten"
