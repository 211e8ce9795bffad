"""Every ``temporal workflow`` command and ``curl`` example of the integration and operations
pages runs against a live stack, with only its placeholders replaced.

The pages address agent ``ada``, example ULIDs and the embedded stack's ports. Each of those is
a placeholder named in :data:`PLACEHOLDERS` with what replaces it; a block holding a
placeholder the mapping does not know fails the test, so an example cannot drift away from
what runs. The stack is the session's: the payload codec on and its endpoint running, a worker
with the scripted provider on the task queue the pages name, and the web channel served in
this process. A command given ``--codec-endpoint`` must print decoded payloads; the reading
commands are also run without it, to show the endpoint is what makes them readable.

Commands not run here are listed in :data:`NOT_RUN` with the reason.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowQueryFailedError, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from contract import names
from schemas.agents import AgentCreate
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from store.queries.agents import create_agent
from temporal import inbox
from temporal.devserver import temporal_binary
from tests.harness import event, running_worker, unique
from tests.integration.edge import Edge
from tests.webchannel.web import serving

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ("integration.md", "operations.md")
"""In this order: the integration page's messages make the events the operations page reads."""
SEALED = ("persyn-encrypted", base64.b64encode(b"binary/persyn-encrypted").decode().rstrip("="))
"""What a sealed payload shows as in the CLI's output: its encoding, as text or in base64."""


def refused(output: str) -> bool:
    """Whether an HTTP answer is an error body (curl exits 0 on any status without ``-f``)."""
    try:
        body = json.loads(output)
    except ValueError:
        return False
    return isinstance(body, dict) and set(body) <= {"error", "detail"} and bool(body)


def sealed(output: str) -> bool:
    """Whether ``output`` shows a payload still sealed."""
    return any(mark in output for mark in SEALED)


@dataclass(frozen=True)
class Values:
    """What the live stack gives each placeholder."""

    handle: str
    conversation: str
    activation: str
    codec_endpoint: str
    web_url: str
    events: dict[str, str]
    now: str


PLACEHOLDERS: dict[str, Callable[[Values], str]] = {
    # The agent the pages talk to, by handle (a fresh one, so no other test's agent is met).
    "ada": lambda v: v.handle,
    # Ports of the embedded stack: the codec endpoint and `persyn serve --port 8080`.
    "http://127.0.0.1:8234": lambda v: v.codec_endpoint,
    "http://127.0.0.1:8080": lambda v: v.web_url,
    # Runs the pages point at: an activation (elided on the page) and a conversation.
    "01JD3M8C...": lambda v: v.activation,
    "01JD3M6ZC4R8W2Y6A0D3F5H7K9": lambda v: v.conversation,
    # Event IDs the pages send and then ask about: a fresh ULID each, the same on every page.
    "01JD3M6Z8Q4N1V5X7B2C9E0F1G": lambda v: v.events["01JD3M6Z8Q4N1V5X7B2C9E0F1G"],
    "01JD3M9C5D7E8F9G0H1J2K3M4N": lambda v: v.events["01JD3M9C5D7E8F9G0H1J2K3M4N"],
    "01JD3M8B4K7Q2W9E5R1T3Y6V8X": lambda v: v.events["01JD3M8B4K7Q2W9E5R1T3Y6V8X"],
    "01JD3MA0Q8R2S4T6V8W0X2Y4Z6": lambda v: v.events["01JD3MA0Q8R2S4T6V8W0X2Y4Z6"],
    "01JD3MB1C2D3E4F5G6H7J8K9M0": lambda v: v.events["01JD3MB1C2D3E4F5G6H7J8K9M0"],
    # The Temporal frontend, in the TypeScript example's environment (the example is not run
    # here: tests/integration/test_typescript_example.py runs it on the session's server).
    "127.0.0.1:7233": lambda v: "127.0.0.1:7233",
    # A message ID pull_outbox acknowledges (acknowledging an unknown one changes nothing).
    "01JD3MB4Q7R8S9T0V1W2X3Y4Z5": lambda v: new_ulid(),
    # An approval a live activation waits for (the commands naming one are in NOT_RUN).
    "01JD3MD0...": lambda v: new_ulid(),
    # A moment the operator fills in.
    "<deploy time>": lambda v: v.now,
    # The web channel's token, exported as the page says.
    "$PERSYN_TOKEN": lambda v: "$PERSYN_TOKEN",
}
"""Every placeholder the pages' examples may hold, and what replaces it."""

FINDERS = (
    re.compile(r"\b[0-9A-Z]{26}\b"),  # a ULID
    re.compile(r"\b[0-9A-Z]{4,}\.\.\."),  # an elided ULID
    re.compile(r"<[a-z][a-z ]*>"),  # <something to fill in>
    re.compile(r"\$\{?[A-Z_][A-Z0-9_]*\}?"),  # an environment variable
    re.compile(r"(?:https?://)?(?:127\.0\.0\.1|localhost):\d+"),  # a local port
    re.compile(r"\bada\b"),  # the example agent
)
"""What a placeholder looks like; each one found must be a key of :data:`PLACEHOLDERS`."""

NOT_RUN: dict[str, str] = {
    "persyn ": "Persyn's own commands: their tests are in tests/cli, tests/integration and "
    "tests/webchannel (`persyn serve` is served in this process, its token made with it)",
    "temporal workflow terminate": "ends runs, one after asking for confirmation; "
    "tests/workflows/test_terminate*.py terminate through the SDK",
    "cd examples/typescript": "the TypeScript example's build: scripts/test runs it, and "
    "tests/integration/test_typescript_example.py runs the example against a live stack",
    "TEMPORAL_ADDRESS=": "the TypeScript example itself: "
    "tests/integration/test_typescript_example.py runs it against a live stack",
    "temporal workflow update execute --name decide_approval": "needs an approval a live "
    "activation waits for: tests/approvals sends the same update through the SDK",
    "curl -sS -X POST http://127.0.0.1:8080/v1/agents/ada/approvals/": "needs an approval a "
    "live activation waits for: tests/approvals/test_web.py posts the same decision",
}
"""Commands of the pages this test does not run, by prefix, and why."""

RUN = ("temporal workflow ", "curl ")
READS = ("temporal workflow query", "temporal workflow describe", "temporal workflow show")
SEALED_ON_PURPOSE = ("temporal workflow show --workflow-id agent/ada --output json >",)
"""Reads that keep the history sealed: ``persyn replay`` opens it with the deployment's keys."""


def decoded_read(command: str) -> bool:
    """Whether the page's ``command`` reads payloads a person should see in plain text."""
    return command.startswith(READS) and not command.startswith(SEALED_ON_PURPOSE)


@dataclass(frozen=True)
class Example:
    """One command of a page's fenced shell block."""

    page: str
    command: str


def examples(page: str) -> list[Example]:
    """The commands of a page's ``sh``, ``shell`` and ``bash`` blocks, continuations joined."""
    text = (DOCS / page).read_text(encoding="utf-8")
    found: list[Example] = []
    for block in re.findall(r"```(?:sh|shell|bash)\n(.*?)```", text, flags=re.DOTALL):
        pending = ""
        for line in block.replace("\\\n", " ").splitlines():
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            pending = f"{pending}\n{line}" if pending else line.strip()
            if pending.count("'") % 2 == 0:  # quotes balanced: the command is complete
                found.append(Example(page, pending))
                pending = ""
        assert not pending, f"{page}: unbalanced quotes in {pending!r}"
    return found


def placeholders(command: str) -> set[str]:
    """Every placeholder-shaped piece of ``command``."""
    return {match for finder in FINDERS for match in finder.findall(command)}


def fill(command: str, values: Values) -> str:
    """``command`` with each placeholder replaced, longest first (a URL before its port)."""
    for key in sorted(PLACEHOLDERS, key=len, reverse=True):
        if key == "ada":
            command = re.sub(r"\bada\b", values.handle, command)
        else:
            command = command.replace(key, PLACEHOLDERS[key](values))
    return command


def runnable(example: Example) -> bool:
    """Whether this test runs ``example`` (else it must be listed in :data:`NOT_RUN`)."""
    if example.command.startswith(tuple(NOT_RUN)):
        return False
    assert example.command.startswith(RUN), (
        f"{example.page}: {example.command.splitlines()[0]!r} is neither run nor listed in NOT_RUN"
    )
    return True


def test_every_placeholder_is_known() -> None:
    commands = [e for page in PAGES for e in examples(page)]
    assert len([e for e in commands if runnable(e)]) >= 25
    for example in commands:
        unknown = placeholders(example.command) - set(PLACEHOLDERS)
        assert not unknown, (
            f"{example.page}: {sorted(unknown)} in {example.command!r}: "
            "add each to PLACEHOLDERS with the value that replaces it"
        )


def test_every_read_passes_the_codec_endpoint() -> None:
    for page in PAGES:
        for example in examples(page):
            if decoded_read(example.command):
                assert "--codec-endpoint http://127.0.0.1:8234" in example.command, (
                    f"{page}: {example.command!r} prints ciphertext without --codec-endpoint"
                )


async def shell(command: str, *, env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        command,
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_every_documented_command_runs(client: Client, stack: Edge, tmp_path: Path) -> None:
    handle = unique("ada")
    async with running_worker(client, stack, task_queue=names.TASK_QUEUE) as harness:
        async with harness.db.session() as session:
            spec = AgentCreate(handle=handle, name="Ada", persona="A helpful colleague.")
            await create_agent(session, spec=spec)
        await inbox.start_agent(client, handle=handle, task_queue=names.TASK_QUEUE)
        # The run the pages read: a turn on the channel their messages use.
        support = ChannelRef(service="web", channel="support")
        receipt = await harness.send(handle, event("Is the report ready?", channel=support))
        assert receipt.marker is not None and receipt.marker.activation_id is not None
        settings = stack.settings(home=tmp_path, task_queue=names.TASK_QUEUE)
        async with serving(settings, client) as web:
            values = Values(
                handle=handle,
                conversation=receipt.marker.conversation_id or "",
                activation=receipt.marker.activation_id,
                codec_endpoint=stack.codec_endpoint,
                web_url=web.base_url,
                events={
                    key: new_ulid() for key in PLACEHOLDERS if re.fullmatch(r"[0-9A-Z]{26}", key)
                },
                now=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            )
            env = {
                **os.environ,
                "PATH": os.pathsep.join(
                    [
                        str(temporal_binary().parent),
                        str(Path(sys.executable).parent),
                        os.environ["PATH"],
                    ]
                ),
                "TEMPORAL_ADDRESS": stack.temporal_address,
                "PERSYN_TOKEN": web.token,
            }
            env.pop("TEMPORAL_CODEC_ENDPOINT", None)
            ran = 0
            for page in PAGES:
                for example in examples(page):
                    if not runnable(example):
                        continue
                    command = fill(example.command, values)
                    code, out, err = await shell(command, env=env, cwd=tmp_path)
                    # curl's --max-time ends a stream: exit 28 after what it printed.
                    streamed = code == 28 and "/stream" in command
                    assert code == 0 or streamed, (page, command, err or out)
                    if "--codec-endpoint" in command or decoded_read(example.command):
                        assert not sealed(out), ("prints ciphertext", page, command, out)
                    if command.startswith("curl "):
                        assert not refused(out), (page, command, out)
                    if "/decode" in command:
                        assert '"payloads"' in out and not sealed(out), (page, command, out)
                    if decoded_read(example.command):
                        bare = command.replace(f"--codec-endpoint {stack.codec_endpoint}", "")
                        code, out, err = await shell(bare, env=env, cwd=tmp_path)
                        assert code != 0 or sealed(out), ("readable without the codec", bare)
                    ran += 1
    assert ran >= 25


async def test_what_an_sdk_sees(client: Client, stack: Edge) -> None:
    """The error shapes docs/integration.md lists for an SDK without Persyn's converter."""
    handle = unique("ada")
    plain = await Client.connect(stack.temporal_address)  # an SDK's defaults: no codec
    async with running_worker(client, stack) as harness:
        async with harness.db.session() as session:
            spec = AgentCreate(handle=handle, name="Ada", persona="A helpful colleague.")
            await create_agent(session, spec=spec)
        await inbox.start_agent(client, handle=handle, task_queue=harness.task_queue)
        agent = plain.get_workflow_handle(names.agent_workflow_id(handle))
        bad = {
            "event": {
                "event_id": new_ulid(),
                "channel": {"service": "web", "channel": "x"},
                "speaker": {"speaker_id": "u-17"},
                "text": "",
            }
        }
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await agent.execute_update(names.SUBMIT, bad, id=new_ulid())
        cause = refused.value.cause
        assert isinstance(cause, ApplicationError), cause
        assert (cause.type, cause.non_retryable) == ("InvalidInput", True)
        assert cause.message.startswith("invalid submit input: event.text:"), cause.message
        with pytest.raises(WorkflowQueryFailedError) as unknown:
            await agent.query("stauts", {})
        assert "stauts" in str(unknown.value) and "status" in str(unknown.value)
        with pytest.raises(Exception) as unreadable:
            await agent.query(names.STATUS, {})
        assert "Unknown payload encoding binary/persyn-encrypted" in str(unreadable.value)
