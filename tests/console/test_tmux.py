"""``persyn console`` in a real terminal (tmux), read back from the pane as a person would."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest
from sqlmodel import select
from temporalio.client import Client

from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from schemas.models import ProviderName
from store.tables.agents import Person
from tests.approvals.conftest import AFTER_TOOL, ASK_BELL, RING, Bell
from tests.deliberation.helpers import INLINE, claim_rules, new_agent, worker
from tests.harness import (
    Harness,
    Stack,
    close_dependencies,
    dependencies,
    unique,
    until,
)
from workers.build import build_worker

ROOT = Path(__file__).resolve().parents[2]

# scripts/test installs tmux and sets PERSYN_REQUIRE_TMUX=1, so a missing tmux fails there.
pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None and os.environ.get("PERSYN_REQUIRE_TMUX") != "1",
    reason="tmux is not installed",
)


@contextmanager
def tmux(command: list[str], env: dict[str, str]) -> Iterator[tuple[str, str]]:
    """``command`` in a detached tmux session of 110 by 36 on a private server."""
    socket, session = unique("persyn-console"), "console"
    # The pane stays a while after the command ends, so a failure to start can be read.
    line = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *command]) + "; sleep 5"
    tmux_ = ["tmux", "-L", socket]
    # Sized before the console starts: a detached session may take the server's default size
    # whatever -x says, and the console would first draw at that size.
    subprocess.run(
        [*tmux_, "new-session", "-d", "-s", session, "-x", "110", "-y", "36"], check=True
    )
    subprocess.run([*tmux_, "resize-window", "-t", session, "-x", "110", "-y", "36"], check=True)
    subprocess.run([*tmux_, "respawn-pane", "-k", "-t", session, "-c", str(ROOT), line], check=True)
    try:
        yield socket, session
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=False)


def pane(socket: str, session: str) -> str:
    """What the terminal shows now."""
    return subprocess.run(
        ["tmux", "-L", socket, "capture-pane", "-p", "-t", session],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def keys(socket: str, session: str, *typed: str) -> None:
    """Type into the terminal (tmux key names, e.g. ``Enter``, ``C-q``)."""
    subprocess.run(["tmux", "-L", socket, "send-keys", "-t", session, *typed], check=True)


async def shows(socket: str, session: str, text: str, timeout: float = 60) -> None:
    """Wait until the pane shows ``text``; a failure says what it showed instead."""
    try:
        await until(lambda: text in pane(socket, session), timeout=timeout)
    except AssertionError:
        raise AssertionError(f"{text!r} never showed; the pane:\n{pane(socket, session)}") from None


def _env(stack: Stack, task_queue: str) -> dict[str, str]:
    """What ``persyn console`` needs to reach the session's stack and the test's worker."""
    return {
        "PERSYN_HOME": str(stack.home),
        "PERSYN_DATABASE_URL": stack.dsn,
        "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
        "PERSYN_TASK_QUEUE": task_queue,
        "PERSYN_CODEC_ENABLED": os.environ.get("PERSYN_CODEC_ENABLED", "false"),
        "TERM": "xterm-256color",
    }


async def test_the_console_in_a_terminal_talks_and_shows_the_reply(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(task="respond", reply="Hello from the terminal, {last}")]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        command = [sys.executable, "-m", "cli.main", "console", "--agent", handle, "--as", "ada"]
        with tmux(command, _env(stack, harness.task_queue)) as (socket, session):
            await shows(socket, session, "Enter sends")
            keys(socket, session, "-l", "hi there")
            keys(socket, session, "Enter")
            await shows(socket, session, "Hello from the terminal, hi there")  # the draft
            await shows(socket, session, "Wren:")  # the committed reply
            await shows(socket, session, "Heartbeat")
            shown = pane(socket, session)
            keys(socket, session, "C-q")
            await until(lambda: "Enter sends" not in _or_gone(socket, session))

    assert f"Wren ({handle}) · you are ada [ada] · terminal:console" in shown
    assert "ada> hi there" in shown
    assert "Wren:" in shown and "Goals (0)" in shown
    assert "^q Quit" in shown


def _or_gone(socket: str, session: str) -> str:
    """The pane, or nothing once the console has left and its session closed."""
    try:
        return pane(socket, session)
    except subprocess.CalledProcessError:
        return ""


@asynccontextmanager
async def story_worker(client: Client, stack: Stack, bell: Bell) -> AsyncIterator[Harness]:
    """Inline deliberation (every reply revised) and a bell that rings only when approved."""
    settings = stack.settings(deliberation=INLINE, approvals=ASK_BELL)
    provider = ScriptedProvider(Script(rules=[AFTER_TOOL, RING, *claim_rules()]))
    deps = dependencies(settings, providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn)
    deps.extra_tools = [bell]
    queue = unique("tq-story")
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


async def named(harness: Harness, agent: str, name: str) -> bool:
    """Whether the agent knows someone by ``name``."""
    async with harness.db.session() as session:
        found = await session.exec(
            select(Person.id).where(Person.agent == agent, Person.display_name == name)
        )
        return found.first() is not None


async def test_an_operators_session_without_leaving_the_console(
    client: Client, stack: Stack
) -> None:
    """Talk, watch the reply revised, approve an action, rename, browse, open a trace, leave."""
    bell = Bell()
    async with story_worker(client, stack, bell) as harness:
        handle = (await harness.create_agent(name="Wren")).handle
        command = [sys.executable, "-m", "cli.main", "console", "--agent", handle, "--as", "grace"]
        with tmux(command, _env(stack, harness.task_queue)) as (socket, session):
            await shows(socket, session, "Enter sends")
            keys(socket, session, "-l", "what did we agree about the report?")
            keys(socket, session, "Enter")
            await shows(socket, session, "Wren (revised):")
            revised = pane(socket, session)

            keys(socket, session, "-l", "Please ring the bell.")
            keys(socket, session, "Enter")
            await shows(socket, session, "asks for approval")
            await shows(socket, session, "a Approve")  # the footer: the prompt has the keys
            keys(socket, session, "a")
            await shows(socket, session, "approved")
            await until(lambda: bell.runs)

            keys(socket, session, "-l", "/rename Grace Hopper")
            keys(socket, session, "Enter")
            main = "you are Grace Hopper [grace]"  # the title: the main screen is up
            await shows(socket, session, main)
            keys(socket, session, "-l", "it is me again")
            keys(socket, session, "Enter")
            await shows(socket, session, "Grace Hopper> it is me again")
            await until(lambda: not {"is thinking", "is revising"} & _words(socket, session))
            # The directory lists people as the store names them: the new name is written when
            # the message is admitted, which a loaded machine may not have done yet.
            await until(lambda: named(harness, handle, "Grace Hopper"))

            keys(socket, session, "F2")
            await shows(socket, session, "Enter opens Grace Hopper")  # the cursor is on her
            keys(socket, session, "Enter")  # the cursor starts on the first person
            await shows(socket, session, "identities:")
            directory = pane(socket, session)
            keys(socket, session, "Escape")
            await shows(socket, session, main)

            keys(socket, session, "F3")
            await shows(socket, session, "Read again")
            trace = pane(socket, session)
            keys(socket, session, "Escape")
            await shows(socket, session, main)
            keys(socket, session, "C-q")
            await until(lambda: main not in _or_gone(socket, session))

    assert "Wren (revised):" in revised and "I'd guess" in revised  # the hedged revision
    assert len(bell.runs) == 1
    assert "Grace Hopper\n" in directory and "terminal:console as grace" in directory
    assert "activation" in trace or "no spans" in trace


def _words(socket: str, session: str) -> set[str]:
    """Which of the marks of a turn still being written the pane shows."""
    shown = pane(socket, session)
    return {mark for mark in ("is thinking", "is revising") if mark in shown}
