"""The console's live cognition, driven by Textual's pilot against the real stack.

Streaming, revision, withdrawal with the stated reason, tool indicators, woven conclusions and
unprompted messages, each as the operator sees it in the transcript.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel
from temporalio.client import Client

from activities.gateway.providers.scripted import (
    Script,
    ScriptedProvider,
    ScriptRule,
    ScriptToolCall,
)
from activities.tools.builtin.code import TOOL_NAME as CODE_TOOL
from activities.tools.builtin.images import EDIT_TOOL_NAME as EDIT_IMAGE_TOOL
from activities.tools.builtin.images import TOOL_NAME as IMAGE_TOOL
from activities.tools.registry import Tool, ToolInput, ToolRun
from cli.console_app.transcript import tool_line
from schemas.deliberation import Objection
from schemas.events import Outcome
from schemas.ids import new_ulid
from schemas.models import ProviderName
from schemas.tools import ToolCallRecord
from store.queries.deliberation import park_conclusion
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
from tests.harness import (
    Harness,
    Stack,
    close_dependencies,
    dependencies,
    unique,
    until,
)
from workers.build import build_worker


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


class HoldInput(ToolInput):
    """Nothing to say."""


class Held(BaseModel):
    """What the tool returned."""

    done: bool


class HeldTool(Tool):
    """A tool that runs until the test lets it finish."""

    name = "slow_lookup"
    description = "Look something up, slowly."
    input_model = HoldInput
    output_model = Held

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def run(self, call: ToolRun, args: HoldInput) -> Held:
        await self.release.wait()
        return Held(done=True)


@asynccontextmanager
async def held_tool_worker(client: Client, stack: Stack, tool: HeldTool) -> AsyncIterator[Harness]:
    rules = [
        ScriptRule(
            task="respond", after_tool=False, tool_calls=[ScriptToolCall(name="slow_lookup")]
        ),
        ScriptRule(task="respond", after_tool=True, reply="Found it."),
    ]
    provider = ScriptedProvider(Script(rules=rules))
    deps = dependencies(
        stack.settings(), providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn
    )
    deps.extra_tools = [tool]
    queue = unique("tq-console")
    async with build_worker(client, deps, task_queue=queue) as running:
        yield Harness(
            client=client,
            task_queue=queue,
            deps=deps,
            provider=provider,
            worker=running,
            db=deps.db,
        )
    await close_dependencies(deps)


async def test_a_tool_still_running_is_shown_so_until_its_result_arrives(
    client: Client, stack: Stack
) -> None:
    tool = HeldTool()
    async with held_tool_worker(client, stack, tool) as harness:
        agent = (await harness.create_agent(name="Wren")).handle
        app = console(stack, harness, agent)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "look it up")
            await until(lambda: app.transcript.turns() and app.transcript.turns()[0].calls)
            running = list(app.transcript.turns()[0].calls.values())
            tool.release.set()
            await settled(app)
            [turn] = app.transcript.turns()

    assert running == ["⚙ slow_lookup … running"]
    assert list(turn.calls.values()) == ["✓ slow_lookup"] and turn.text == "Found it."


def test_sandbox_tasks_and_image_renders_are_pending_until_their_result() -> None:
    now = datetime.now(UTC)
    call = ToolCallRecord(call_id=new_ulid(), activation_id=new_ulid(), name="x", created_at=now)
    for name in (CODE_TOOL, IMAGE_TOOL, EDIT_IMAGE_TOOL):
        assert tool_line(call.model_copy(update={"name": name})) == f"⚙ {name} … pending"
    failed = call.model_copy(update={"finished_at": now, "is_error": True, "result": "no\nmore"})
    assert tool_line(failed) == "✗ x: no"


async def test_a_parked_conclusion_woven_into_the_reply_is_marked(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(task="respond", reply="On second thought, yes.")]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        now = datetime.now(UTC)
        async with harness.db.session() as session:
            await park_conclusion(
                session,
                parked_id=new_ulid(),
                agent=handle,
                channel_key="terminal:woven",
                activation_id=new_ulid(),
                conversation_id=new_ulid(),
                candidate="We agreed on Friday.",
                objections=[Objection(type="confabulation", explanation="No record of it.")],
                refined="I don't remember agreeing on Friday.",
                created_at=now,
                expires_at=now + timedelta(days=1),
            )
        app = console(stack, harness, handle, channel="woven")
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "so, about Friday?")
            await settled(app)
            await until(lambda: app.transcript.turns()[0].woven_count)
            [turn] = app.transcript.turns()

    assert turn.woven_count == 1
