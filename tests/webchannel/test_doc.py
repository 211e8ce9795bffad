"""Every command of docs/integration.md's web channel section runs as written.

The section's ``shell`` blocks address agent ``ada`` through ``persyn serve`` on port 8080
with ``$PERSYN_TOKEN``. Here the service runs on a free port and the agent has a handle of its
own (the URL and the handle are the only things replaced, so this test never meets the other
doc test's ``ada``), the token comes from the section's own ``persyn tokens create``, and
``persyn serve`` itself is the one command not run: the test serves the same application.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

from temporalio.client import Client

from contract import names
from schemas.agents import AgentCreate
from schemas.ids import new_ulid
from store.queries.agents import create_agent
from tests.harness import Stack, running_worker, unique
from tests.webchannel.web import serving

DOC = Path(__file__).resolve().parents[2] / "docs" / "integration.md"
SECTION = "## The web channel (HTTP)"
EXAMPLE_URL = "http://127.0.0.1:8080"
EXAMPLE_APPROVAL = "01JD3MD0..."
"""The section's example approval ID: the test has none waiting, so it names an unknown one."""


def section_commands() -> list[str]:
    """The shell commands of the section, in order, continuation lines joined."""
    text = DOC.read_text(encoding="utf-8").split(SECTION, 1)[1]
    commands: list[str] = []
    for block in re.findall(r"```shell\n(.*?)```", text, flags=re.DOTALL):
        pending = ""
        for line in block.replace("\\\n", " ").splitlines():
            if not pending and not line.strip():
                continue
            pending = f"{pending}\n{line}" if pending else line
            if pending.count("'") % 2 == 0:  # quotes balanced: the command is complete
                commands.append(pending)
                pending = ""
        assert not pending, f"unbalanced quotes in {pending!r}"
    return commands


async def shell(command: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        command,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 90)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def test_the_section_has_every_endpoint() -> None:
    commands = section_commands()
    assert [c.split()[0] for c in commands] == ["persyn", "persyn", *["curl"] * 5]
    assert all(EXAMPLE_URL in c for c in commands if c.startswith("curl"))


async def test_every_web_command_runs_as_written(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack, task_queue=names.TASK_QUEUE) as harness:
        handle = unique("ada")
        async with harness.db.session() as session:
            spec = AgentCreate(handle=handle, name="Ada", persona="A helpful colleague.")
            await create_agent(session, spec=spec)
        settings = stack.settings(home=tmp_path, task_queue=names.TASK_QUEUE)
        async with serving(settings, client) as web:
            env = {
                **os.environ,
                "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
                "PERSYN_HOME": str(tmp_path),
                "PERSYN_DATABASE_URL": stack.dsn,
                "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
                "PERSYN_EMBEDDED": "false",
            }
            outputs: list[str] = []
            unknown_approval = new_ulid()
            for command in section_commands():
                if command.startswith("persyn serve"):
                    continue
                command = command.replace(EXAMPLE_URL, web.base_url)
                command = command.replace("/agents/ada/", f"/agents/{handle}/")
                command = command.replace("--agent ada", f"--agent {handle}")
                # No call waits for approval here: the decision names a fresh ID.
                command = command.replace(EXAMPLE_APPROVAL, unknown_approval)
                code, out, err = await shell(command, env)
                # curl's --max-time ends the stream: exit 28 after what it printed.
                assert code == 0 or (code == 28 and "/stream" in command), (command, err)
                if command.startswith("persyn tokens create"):
                    env["PERSYN_TOKEN"] = out.strip()
                outputs.append(out)

    _, posted, marker, stream, waiting, decided = outputs
    assert json.loads(waiting) == []
    assert json.loads(decided) == {
        "detail": f"there is no approval {unknown_approval} waiting on your channels"
    }
    receipt = json.loads(posted)
    assert receipt["status"] == "completed" and receipt["event_id"] == "01JD3MB1C2D3E4F5G6H7J8K9M0"
    assert json.loads(marker) == receipt["marker"]
    assert receipt["marker"]["outcome"] == "spoke"
    # Resuming from the posted event's ID replays its reply, which names the event.
    assert stream.startswith(": listening")
    replies = [
        json.loads(line.removeprefix("data: "))
        for block in stream.split("\n\n")
        if block.startswith("event: reply")
        for line in block.splitlines()
        if line.startswith("data: ")
    ]
    assert [(r["event_id"], r["text"]) for r in replies] == [
        (receipt["event_id"], receipt["marker"]["text"])
    ]
