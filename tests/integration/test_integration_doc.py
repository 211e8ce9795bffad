"""Every command in docs/integration.md runs as written, with only the addresses filled in.

The page's examples address `agent/ada` on the task queue `persyn`, so this test serves that
queue and creates `ada`, with the payload codec on and its endpoint running, as `persyn up`
runs them. The one ID the page cannot know, the conversation the agent opened, is taken from
the first receipt. JSON output keys the page names are checked against what the
CLI prints.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from temporalio.client import Client

from contract import names
from schemas.agents import AgentCreate
from store.queries.agents import create_agent
from temporal import inbox
from temporal.devserver import temporal_binary
from tests.harness import running_worker
from tests.integration.edge import Edge
from tests.integration.test_temporal_cli import Run

DOC = Path(__file__).resolve().parents[2] / "docs" / "integration.md"
EXAMPLE_CONVERSATION = "01JD3M6ZC4R8W2Y6A0D3F5H7K9"
"""The page's example conversation ID, replaced by the one the agent really opened."""
EXAMPLE_CODEC_ENDPOINT = "http://127.0.0.1:8234"
"""The codec endpoint ``persyn up`` runs, replaced by the session's (like the address)."""
PAYLOAD_COMMANDS = {"update", "execute-update-with-start", "signal", "signal-with-start", "query"}
"""The CLI commands that send or read a payload: with the codec on, they need the endpoint."""


def doc_commands() -> list[list[str]]:
    """The shell commands of the page's ``sh`` blocks, in order, as argument lists."""
    text = DOC.read_text(encoding="utf-8")
    commands: list[list[str]] = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL):
        pending = ""
        for line in block.replace("\\\n", " ").splitlines():
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            pending = f"{pending}\n{line}" if pending else line
            if pending.count("'") % 2 == 0:  # quotes balanced: the command is complete
                commands.append(shlex.split(pending))
                pending = ""
        assert not pending, f"unbalanced quotes in {pending!r}"
    return commands


async def run(*args: str, cwd: Path) -> Run:
    import asyncio

    process = await asyncio.create_subprocess_exec(
        *args,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None
    return Run(process.returncode, stdout.decode(), stderr.decode())


def test_every_example_is_complete() -> None:
    commands = doc_commands()
    assert len(commands) >= 14
    for argv in commands:
        assert argv[0] in {"temporal", "persyn"}, argv
        if argv[0] == "temporal" and argv[2] in PAYLOAD_COMMANDS:
            # The codec is on by default: the page tells integrators to pass the endpoint.
            at = argv.index("--codec-endpoint")
            assert argv[at + 1] == EXAMPLE_CODEC_ENDPOINT, argv
        assert not any("..." in arg for arg in argv), f"an elided example: {argv}"
        for arg in argv:
            for ulid in re.findall(r"\b0[0-9A-Z]{25}\b", arg):
                assert not set(ulid) & set("ILOU"), f"{ulid} is not a ULID (Crockford base32)"


async def test_every_command_runs_as_written(client: Client, stack: Edge, tmp_path: Path) -> None:
    binary = str(temporal_binary())
    persyn = str(Path(binary).parent / "persyn")
    async with running_worker(client, stack, task_queue=names.TASK_QUEUE) as harness:
        async with harness.db.session() as session:
            await create_agent(
                session,
                spec=AgentCreate(handle="ada", name="Ada", persona="A helpful colleague."),
            )
        await inbox.start_agent(client, handle="ada", task_queue=names.TASK_QUEUE)
        conversation: str | None = None
        outputs: dict[str, Any] = {}
        for argv in doc_commands():
            if argv[0] == "persyn":
                done = await run(persyn, *argv[1:], cwd=tmp_path)
                assert done.returncode == 0, (argv, done.stderr)
                continue
            if conversation is not None:
                argv = [arg.replace(EXAMPLE_CONVERSATION, conversation) for arg in argv]
            argv = [stack.codec_endpoint if arg == EXAMPLE_CODEC_ENDPOINT else arg for arg in argv]
            address = ["--address", stack.temporal_address]
            done = await run(binary, *argv[1:], *address, cwd=tmp_path)
            assert done.returncode == 0, (argv, done.stderr)
            as_json = await run(binary, *argv[1:], *address, "-o", "json", cwd=tmp_path)
            assert as_json.returncode == 0, (argv, as_json.stderr)
            key = " ".join(argv[1:3])
            if key in {"workflow update", "workflow execute-update-with-start", "workflow query"}:
                outputs.setdefault(key, json.loads(as_json.stdout))
            if conversation is None and key == "workflow update":
                receipt = outputs[key]["result"]
                conversation = receipt["marker"]["conversation_id"]

    # The JSON output keys the page names.
    assert {"name", "updateId", "result"} <= set(outputs["workflow update"])
    assert set(outputs["workflow update"]["result"]) == {"event_id", "agent", "status", "marker"}
    with_start = outputs["workflow execute-update-with-start"]
    assert {"workflowId", "runId", "updateId", "updateResult"} <= set(with_start)
    assert isinstance(outputs["workflow query"]["queryResult"], list)
    # The receipt on the page has the receipt's real fields.
    page = DOC.read_text(encoding="utf-8")
    example = json.loads(re.findall(r"```json\n(.*?)```", page, flags=re.DOTALL)[1])
    assert set(example) == set(with_start["updateResult"])
    assert set(example["marker"]) == set(with_start["updateResult"]["marker"])
    # The schema export the page shows wrote the integrator bundle.
    assert (tmp_path / "persyn-schemas" / "SubmitEventInput.json").is_file()
    assert not (tmp_path / "persyn-schemas" / "ActivationInput.json").exists()
