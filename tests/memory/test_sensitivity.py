"""Sensitivity controls: a channel's least sensitivity for memories formed on it, and an
operator's override of one memory's sensitivity, audited and honoured by recall at once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from temporalio.client import Client
from typer.testing import CliRunner, Result

from activities.memory.encoders.null import NullEncoder
from activities.memory.recall import MemoryRecall
from cli import memory
from schemas.events import ChannelRef
from schemas.memory import MemorySettings, Sensitivity, channel_floor, stricter
from schemas.memory_formation import MemoryAction
from schemas.settings import get_settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries import memory as records
from tests.harness import Stack, terminal
from tests.memory.formation.helpers import (
    close_and_consolidate,
    formation_rules,
    formation_worker,
    records_of,
)
from tests.memory.formation.helpers import new_agent as formation_agent
from tests.memory.recall.records import NOW, add_channel, add_memory, new_agent

runner = CliRunner()
CHANNEL = ChannelRef(service="terminal", channel="kitchen")


def test_the_floor_is_found_by_key_then_group_then_service() -> None:
    floors = {
        "terminal:clinic": Sensitivity.CONFIDENTIAL,
        "group:family": Sensitivity.PRIVATE,
        "web": Sensitivity.RESTRICTED,
    }
    assert channel_floor(floors, key="terminal:clinic", service="terminal", group="family") == (
        Sensitivity.CONFIDENTIAL
    )
    assert channel_floor(floors, key="terminal:tty", service="terminal", group="family") == (
        Sensitivity.PRIVATE
    )
    assert channel_floor(floors, key="web:lobby", service="web", group=None) == (
        Sensitivity.RESTRICTED
    )
    assert channel_floor(floors, key="terminal:tty", service="terminal", group=None) is None
    # A floor only ever raises: a stricter classification stays.
    assert stricter(Sensitivity.PUBLIC, Sensitivity.CONFIDENTIAL) is Sensitivity.CONFIDENTIAL
    assert stricter(Sensitivity.RESTRICTED, Sensitivity.PRIVATE) is Sensitivity.RESTRICTED
    assert stricter(Sensitivity.PUBLIC, None) is Sensitivity.PUBLIC


async def test_memories_formed_on_a_channel_are_at_least_its_sensitivity(
    client: Client, stack: Stack
) -> None:
    floors = {"terminal:clinic": Sensitivity.CONFIDENTIAL}
    settings = {"memory": MemorySettings(channel_sensitivity=floors), "encoder": "none"}
    rules = formation_rules(sensitivity="public")  # the classifier calls everything public
    async with formation_worker(client, stack, rules=rules, settings_overrides=settings) as harness:
        agent = await formation_agent(harness.db, idle_minutes=0.1)
        clinic = await harness.say(agent, "My blood test came back.", channel=terminal("clinic"))
        lobby = await harness.say(agent, "Nice weather today.", channel=terminal("lobby"))
        conversations = [r.marker.conversation_id for r in (clinic, lobby) if r.marker]
        assert len(conversations) == 2 and all(conversations)
        for conversation in conversations:
            await close_and_consolidate(harness.client, str(conversation))
        formed = {r.conversation_id: r.sensitivity for r in await records_of(harness.db, agent)}
    assert formed == {
        conversations[0]: Sensitivity.CONFIDENTIAL,
        conversations[1]: Sensitivity.PUBLIC,
    }


def persyn() -> typer.Typer:
    app = typer.Typer()
    app.add_typer(memory.app, name="memory")
    return app


@pytest.fixture
def cli_env(
    postgres: EmbeddedPostgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PERSYN_DATABASE_URL", postgres.dsn)
    monkeypatch.setenv("PERSYN_ENCODER", "none")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


async def invoke(args: list[str]) -> Result:
    """Run the CLI on a thread: its commands start their own event loop, as in a terminal."""
    return await asyncio.to_thread(lambda: runner.invoke(persyn(), args))


async def recalled(db: Database, agent: str, present: list[str]) -> list[str]:
    surfaced = await MemoryRecall(db, NullEncoder(), MemorySettings()).recall(
        agent=agent,
        channel_key=CHANNEL.key,
        present=present,
        query="the tomato plants",
        now=NOW,
        context_window=8192,
    )
    return [m.id for m in surfaced.records] if surfaced is not None else []


async def test_an_override_is_audited_and_recall_honours_it_at_once(
    cli_env: None, db: Database
) -> None:
    agent = await new_agent(db, "sens")
    channel = await add_channel(db, agent, CHANNEL)
    record_id = await add_memory(
        db,
        agent=agent,
        channel_id=channel,
        summary="Ada told me about her tomato plants and her hospital visit.",
        sensitivity="public",
        participants=["ada"],
    )
    assert await recalled(db, agent, ["ada", "bob"]) == [record_id]

    reason = "mentions a hospital visit"
    changed = await invoke(
        ["memory", "sensitivity", record_id, "confidential", "--reason", reason, "--by", "ops"]
    )
    assert changed.exit_code == 0, changed.output
    assert changed.output.startswith(f"{record_id}: public -> confidential")

    # Bob is present: the record is fenced off now. Ada alone still hears it.
    assert await recalled(db, agent, ["ada", "bob"]) == []
    assert await recalled(db, agent, ["ada"]) == [record_id]
    async with db.session() as session:
        found = await records.detail(session, record_id=record_id)
    assert found is not None and found.record.sensitivity is Sensitivity.CONFIDENTIAL
    [entry] = found.audit
    assert (entry.action, entry.actor) == (MemoryAction.SENSITIVITY, "ops")
    assert entry.reason == f"public -> confidential: {reason}"

    again = await invoke(["memory", "sensitivity", record_id, "CONFIDENTIAL", "--reason", "x"])
    assert again.exit_code == 0 and "already confidential; nothing changed" in again.output
    shown = await invoke(["memory", "show", record_id])
    assert "sensitivity by ops: public -> confidential: mentions a hospital visit" in shown.output


async def test_bad_ids_levels_and_owners_get_one_line_errors(cli_env: None, db: Database) -> None:
    agent = await new_agent(db, "sens")
    channel = await add_channel(db, agent, CHANNEL)
    record_id = await add_memory(db, agent=agent, channel_id=channel, summary="A quiet day.")
    stranger = await new_agent(db, "stranger")
    gone = await add_memory(
        db, agent=agent, channel_id=channel, summary="Withdrawn.", forgotten_at=NOW
    )
    cases = [
        ([gone, "public"], f"memory {gone} is forgotten: it is out of recall already"),
        (["not-a-ulid", "private"], "memory id"),
        ([record_id, "secret"], "unknown sensitivity 'secret': use one of public, private"),
        (
            ["01KBXR6B3T8C2V9QJ3YB1W4H5N", "private"],
            "there is no memory 01KBXR6B3T8C2V9QJ3YB1W4H5N",
        ),
        ([record_id, "private", "--agent", stranger], f"is not one of {stranger}'s memories"),
    ]
    for args, message in cases:
        result = await invoke(["memory", "sensitivity", *args, "--reason", "because"])
        assert result.exit_code == 1, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    async with db.session() as session:
        found = await records.detail(session, record_id=record_id)
    assert found is not None and found.record.sensitivity is Sensitivity.PRIVATE
    assert found.audit == []
