"""Hostile and unlucky input at the console: NUL and oversize text, and the store going away."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from temporalio.client import Client

from cli.console_app import app as console_app
from cli.console_app.app import ConsoleApp
from schemas.events import InboundEvent
from schemas.text import MAX_MESSAGE_CHARS
from temporal.devserver import DevServer, free_port
from tests.console.helpers import SIZE, OfflineConsole, console, offline_session, send
from tests.deliberation.helpers import new_agent, worker
from tests.harness import Stack, until
from tests.own_postgres import own_postgres


async def test_nul_and_oversize_text_are_refused_in_one_line_and_kept_in_the_composer(
    client: Client, stack: Stack
) -> None:
    async with worker(client, stack) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hello\x00there")
            kept_nul = app.composer.text
            await send(pilot, "x" * (MAX_MESSAGE_CHARS + 1))
            kept_long = len(app.composer.text)
            errors = [line.text for line in app.transcript.lines("error")]
            turns = app.transcript.turns()

    assert kept_nul == "hello\x00there" and kept_long == MAX_MESSAGE_CHARS + 1
    assert len(errors) == 2 and all("\n" not in e for e in errors)
    assert errors[0].startswith("[not sent: ") and "U+0000" in errors[0]
    assert "the limit is 32,000" in errors[1]
    assert turns == []


async def test_the_store_going_down_is_said_and_the_console_reconnects_losing_nothing_typed(
    stack: Stack,
) -> None:
    with own_postgres("persyn-console-", migrated=True) as server:
        app = ConsoleApp(offline_session(stack, database_url=server.dsn))
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: app.listening)
            server.stop()
            await until(lambda: "store" in app.problems)
            warned = str(app.link.render())
            app.composer.load_text("a thought typed while the store is away")
            await pilot.press("enter")
            await until(lambda: app.transcript.turns() and app.transcript.turns()[0].text)
            [turn] = app.transcript.turns()
            kept = app.composer.text
            server.start()
            await until(lambda: app.listening and not app.problems)
            notices = [line.text for line in app.transcript.lines("notice")]
            after = app.composer.text

    assert warned.startswith("⚠ ") and "the store is unreachable" in warned
    assert "reconnecting" in warned
    assert turn.text.startswith("[not sent: ") and "back in the composer" in turn.text
    assert kept == after == "a thought typed while the store is away"
    assert notices[-1] == "[reconnected]"


@dataclass
class Composed:
    """What one Enter in the composer did."""

    typed: str
    sent: list[InboundEvent]
    you: list[str]
    errors: list[str]
    left: str


async def _compose(stack: Stack, text: str) -> Composed:
    app = OfflineConsole(offline_session(stack))
    async with app.run_test(size=SIZE) as pilot:
        app.composer.load_text(text)
        typed = app.composer.text
        await pilot.press("enter")
        await pilot.pause()
        return Composed(
            typed=typed,
            sent=app.sent,
            you=[line.text for line in app.transcript.lines("you")],
            errors=[line.text for line in app.transcript.lines("error")],
            left=app.composer.text,
        )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=1, max_size=300))
def test_any_composer_text_is_sent_as_typed_or_refused_in_one_line(stack: Stack, text: str) -> None:
    assume(not text.lstrip().startswith("/"))
    done = asyncio.run(_compose(stack, text))
    if not done.typed.strip():
        assert done.sent == [] and done.errors == []  # nothing to send: Enter does nothing
    elif done.sent:
        [event] = done.sent
        assert done.errors == [] and done.left == ""
        assert done.you == [f"Ada> {event.text}"]
    else:
        [error] = done.errors
        assert error.startswith("[not sent: ") and "\n" not in error
        assert done.left == done.typed  # kept, to be fixed


async def test_temporal_going_down_is_said_and_the_console_reconnects_losing_nothing_typed(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console_app, "PANEL_IDLE_S", 0.5)  # the panel is what notices
    server = DevServer(
        port=free_port(), ui_port=None, db_file=tmp_path / "t.db", log_file=tmp_path / "t.log"
    )
    process = server.start(detached=False)
    try:
        address = f"127.0.0.1:{server.port}"
        app = ConsoleApp(offline_session(stack, temporal_address=address))
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: app.panel.state is not None and not app.problems)
            app.composer.load_text("a thought typed while Temporal is away")
            process.terminate()
            process.wait(20)
            await until(lambda: "state" in app.problems)
            warned = str(app.link.render())
            await pilot.press("enter")  # refused after the submission's retries
            await until(lambda: app.transcript.turns()[0].text, timeout=90)
            [turn] = app.transcript.turns()
            kept = app.composer.text
            process = server.start(detached=False)
            await until(lambda: not app.problems, timeout=90)
            notices = [line.text for line in app.transcript.lines("notice")]
            after = app.composer.text
    finally:
        process.terminate()
        process.wait(20)

    assert "the agent's state cannot be read (Temporal does not answer" in warned
    assert turn.text.startswith("[not sent: ") and "back in the composer" in turn.text
    assert kept == after == "a thought typed while Temporal is away"
    assert notices[-1] == "[reconnected]"
