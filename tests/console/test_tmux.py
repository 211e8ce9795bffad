"""``persyn console`` in a real terminal (tmux), read back from the pane as a person would."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from tests.deliberation.helpers import new_agent, worker
from tests.harness import Stack, unique, until

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


async def test_the_console_in_a_terminal_talks_and_shows_the_reply(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(task="respond", reply="Hello from the terminal, {last}")]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        env = {
            "PERSYN_HOME": str(stack.home),
            "PERSYN_DATABASE_URL": stack.dsn,
            "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
            "PERSYN_TASK_QUEUE": harness.task_queue,
            "PERSYN_CODEC_ENABLED": os.environ.get("PERSYN_CODEC_ENABLED", "false"),
            "TERM": "xterm-256color",
        }
        command = [sys.executable, "-m", "cli.main", "console", "--agent", handle, "--as", "ada"]
        with tmux(command, env) as (socket, session):
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
