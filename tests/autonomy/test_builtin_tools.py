"""The built-in tools through real activations: goals, quick facts, memory, introspection,
self-inspection, and messages to contacts that reach consoles and ``persyn inbox``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import typer
from sqlmodel import select
from temporalio.client import Client
from typer.testing import CliRunner

from activities.channels.stream import libpq_dsn
from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from cli.inbox import inbox
from schemas.models import TaskType
from schemas.settings import get_settings
from store.queries.runtime import OUTBOX_CHANNEL
from store.tables import MemoryRecord
from tests.autonomy.conftest import autonomy_worker, tool_calls
from tests.harness import Harness, Stack, terminal


def on(match: str, *calls: tuple[str, dict[str, Any]]) -> ScriptRule:
    return ScriptRule(
        task="respond",
        match=match,
        after_tool=False,
        tool_calls=[ScriptToolCall(name=n, arguments=a) for n, a in calls],
    )


AFTER_TOOL = ScriptRule(task="respond", after_tool=True, reply="Done: {tool}")


async def results(harness: Harness, activation_id: object) -> list[dict[str, Any]]:
    return [json.loads(str(r.result)) for r in await tool_calls(harness, str(activation_id))]


async def said(harness: Harness, handle: str, text: str, **kwargs: Any) -> list[dict[str, Any]]:
    receipt = await harness.say(handle, text, **kwargs)
    assert receipt.marker is not None
    return await results(harness, receipt.marker.activation_id)


async def test_goals_are_authored_by_tools_shape_context_and_outcomes_become_memories(
    client: Client, stack: Stack
) -> None:
    async with autonomy_worker(client, stack, rules=[AFTER_TOOL]) as harness:
        handle = (await harness.create_agent()).handle
        harness.provider.script.rules.append(
            on("a goal", ("create_goal", {"description": "Learn the names of the stars"}))
        )
        [goal] = await said(harness, handle, "Set yourself a goal.")
        await harness.say(handle, "How are you?")
        assert "Learn the names of the stars" in harness.provider.last(TaskType.RESPOND).system

        done = {"goal_id": goal["goal_id"], "status": "achieved", "note": "All 88."}
        harness.provider.script.rules[:0] = [
            on("learned them", ("update_goal", done)),
            on("what are your goals", ("list_goals", {})),
        ]
        [updated] = await said(harness, handle, "You learned them all!")
        assert updated["goal"]["status"] == "achieved"
        # Calls of one round run concurrently, so a dependent read goes in a later round.
        assert await said(harness, handle, "What are your goals now?") == [{"goals": []}]
        async with harness.db.session() as session:
            memories = (
                await session.exec(select(MemoryRecord).where(MemoryRecord.agent == handle))
            ).all()
        assert [m.summary for m in memories] == [
            'I achieved my goal "Learn the names of the stars". All 88.'
        ]
        assert set(memories[0].tags) == {"goal", "achieved"}


async def test_quick_facts_about_a_person_and_about_itself(client: Client, stack: Stack) -> None:
    async with autonomy_worker(client, stack, rules=[AFTER_TOOL]) as harness:
        handle = (await harness.create_agent()).handle
        harness.provider.script.rules.append(
            on(
                "remember",
                ("remember_fact", {"subject": "Ada", "key": "Birthday", "value": "12 March"}),
                ("remember_fact", {"subject": "self", "key": "favourite tea", "value": "oolong"}),
                ("remember_fact", {"subject": "Nobody", "key": "x", "value": "y"}),
            )
        )
        harness.provider.script.rules.insert(
            0, on("what do you know", ("recall_facts", {"subject": "Ada"}))
        )
        ada, own, nobody = await said(harness, handle, "Please remember these.")
        assert ada["key"] == "birthday" and own["subject"] == "self"
        assert "no contact matches 'Nobody'" in nobody["error"]
        [recalled] = await said(harness, handle, "What do you know about Ada?")
        assert [(f["key"], f["value"]) for f in recalled["facts"]] == [("birthday", "12 March")]
        await harness.say(handle, "Hello again.")
        system = harness.provider.last(TaskType.RESPOND).system
        assert "Ada: birthday = 12 March" in system and "you: favourite tea = oolong" in system


async def test_search_memory_and_remember_harder(client: Client, stack: Stack) -> None:
    async with autonomy_worker(client, stack, rules=[AFTER_TOOL]) as harness:
        handle = (await harness.create_agent()).handle
        await harness.say(handle, "The lighthouse keeper is called Morwenna.")
        await harness.say(handle, "Her cat is called Biscuit.", channel=terminal("elsewhere"))
        harness.provider.script.rules.append(
            on(
                "who keeps",
                ("search_memory", {"query": "lighthouse keeper", "limit": 5}),
                ("search_memory", {"keyword": "Biscuit"}),
                ("search_memory", {"regex": "(unclosed"}),
                ("remember_harder", {"memory_id": "not-an-id"}),
            )
        )
        found, other_channel, bad_regex, bad_id = await said(
            harness, handle, "Who keeps the lighthouse?"
        )
        assert any("Morwenna" in hit["text"] for hit in found["hits"])
        assert other_channel["hits"] == []  # another channel's dialog is another compartment
        assert "error" in bad_regex and "error" in bad_id


async def test_self_inspection_and_recent_autonomy(client: Client, stack: Stack) -> None:
    rules = [AFTER_TOOL, on("look at yourself", ("self_inspect", {}), ("recent_autonomy", {}))]
    async with autonomy_worker(client, stack, rules=rules) as harness:
        handle = (await harness.create_agent()).handle
        inspected, autonomy = await said(harness, handle, "Look at yourself.")
        assert inspected["models"]["respond"]["provider"] == "scripted"
        assert {"calculate", "create_goal", "message_contact"} <= set(inspected["tools"])
        assert inspected["host"]["processors"] >= 1 and inspected["host"]["runtime"]
        assert "max_tool_rounds" in inspected["autonomy"]
        assert autonomy == {"entries": []}


@pytest.fixture
def settings_env(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


async def test_a_message_to_a_contact_reaches_consoles_and_the_inbox(
    client: Client, stack: Stack, settings_env: None
) -> None:
    notices: list[dict[str, Any]] = []
    async with await psycopg.AsyncConnection.connect(libpq_dsn(stack.dsn), autocommit=True) as conn:
        await conn.execute(f'LISTEN "{OUTBOX_CHANNEL}"')
        async with autonomy_worker(client, stack, rules=[AFTER_TOOL]) as harness:
            handle = (await harness.create_agent()).handle
            await harness.say(handle, "Hi, I'm Ada.")  # Ada on terminal:tty
            harness.provider.script.rules.append(
                on("tell ada", ("message_contact", {"contact": "ada", "text": "Bob says hello."}))
            )
            [sent] = await said(
                harness, handle, "Tell Ada I said hello.", speaker="bob", channel=terminal("b")
            )
            assert (sent["contact"], sent["channel"]) == ("Ada", "terminal:tty")
            async for notice in conn.notifies(timeout=10):
                payload = json.loads(notice.payload)
                if payload.get("agent") == handle and payload.get("id") == sent["message_id"]:
                    notices.append(payload)
                    break
    # `persyn chat` on Ada's channel shows what it is notified of (unprompted rows only).
    assert notices and notices[0]["channel"] == "terminal:tty"

    app = typer.Typer()
    app.command()(inbox)
    result = await asyncio.to_thread(CliRunner().invoke, app, ["--agent", handle, "--json"])
    assert result.exit_code == 0, result.output
    [line] = [json.loads(row) for row in result.output.splitlines()]
    assert (line["id"], line["channel"], line["text"]) == (
        sent["message_id"],
        "terminal:tty",
        "Bob says hello.",
    )
