"""An integrator with nothing but the `temporal` CLI drives an agent (docs/integration.md).

Every message here is sent by the real CLI binary as a subprocess, with hand-written JSON; only
the setup (an agent record, its workflow started) uses Persyn's own code. The CLI runs without
blocking the event loop, because the worker serving the agent shares that loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from contract import names
from schemas.ids import new_ulid
from temporal import inbox
from temporal.devserver import temporal_binary
from tests.harness import Harness
from tests.integration.edge import Edge

T = TypeVar("T")

DEADLINE = 30.0
"""Seconds any single wait may take before the test fails (generous: a shared 2-core host)."""


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        assert self.returncode == 0, self.stderr or self.stdout
        return json.loads(self.stdout)


async def temporal_cli(stack: Edge, *args: str, codec: bool = True) -> Run:
    """Run ``temporal <args>`` against the test server, JSON output.

    With ``codec`` (as docs/integration.md tells integrators) the CLI reads and writes payloads
    through the codec endpoint; without it, it shows what Temporal stores.
    """
    endpoint = ["--codec-endpoint", stack.codec_endpoint] if codec else []
    process = await asyncio.create_subprocess_exec(
        str(temporal_binary()),
        *args,
        *endpoint,
        "--address",
        stack.temporal_address,
        "--output",
        "json",
        "--command-timeout",
        f"{int(DEADLINE)}s",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=DEADLINE + 10)
    assert process.returncode is not None
    return Run(process.returncode, stdout.decode(), stderr.decode())


async def eventually(probe: Callable[[], Awaitable[T | None]], *, what: str) -> T:
    """Poll ``probe`` until it returns a value, within :data:`DEADLINE` seconds."""
    deadline = time.monotonic() + DEADLINE
    while True:
        found = await probe()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


def event_json(text: str, **overrides: object) -> dict[str, Any]:
    """An InboundEvent as an integrator writes it: plain JSON, defaults left out."""
    return {
        "event_id": new_ulid(),
        "channel": {"service": "web", "channel": "cli-integration"},
        "speaker": {"speaker_id": "grace", "display_name": "Grace"},
        "text": text,
        **overrides,
    }


async def running_agent(harness: Harness) -> str:
    agent = await harness.create_agent()
    await inbox.start_agent(harness.client, handle=agent.handle, task_queue=harness.task_queue)
    return agent.handle


async def submit(stack: Edge, handle: str, event: dict[str, Any]) -> Run:
    return await temporal_cli(
        stack,
        "workflow",
        "update",
        "execute",
        "--workflow-id",
        names.agent_workflow_id(handle),
        "--name",
        names.SUBMIT,
        # The event ID doubles as the update ID: a retried submission is answered, not repeated.
        "--update-id",
        event["event_id"],
        "--input",
        json.dumps({"event": event}),
    )


async def test_submit_returns_a_receipt_with_the_reply(harness: Harness, stack: Edge) -> None:
    handle = await running_agent(harness)
    event = event_json("hello from the command line")

    receipt = (await submit(stack, handle, event)).json()["result"]

    assert receipt["event_id"] == event["event_id"]
    assert receipt["agent"] == handle
    assert receipt["status"] == "completed"
    assert receipt["marker"]["outcome"] == "spoke"
    assert receipt["marker"]["text"] == "hello from the command line"  # the scripted echo

    # The same submission again is answered from the first run: same receipt, no second reply.
    again = (await submit(stack, handle, event)).json()["result"]
    assert again == receipt


async def test_update_with_start_needs_no_running_workflow(harness: Harness, stack: Edge) -> None:
    agent = await harness.create_agent()  # a record, but no agent workflow yet

    async def submit_with_start(text: str) -> dict[str, Any]:
        event = event_json(text)
        run = await temporal_cli(
            stack,
            "workflow",
            "execute-update-with-start",
            "--workflow-id",
            names.agent_workflow_id(agent.handle),
            "--type",
            "AgentWorkflow",
            "--task-queue",
            harness.task_queue,
            # Join the agent's workflow when it runs; start it when it does not.
            "--id-conflict-policy",
            "UseExisting",
            "--input",
            json.dumps({"handle": agent.handle}),
            "--update-name",
            names.SUBMIT,
            "--update-id",
            event["event_id"],
            "--update-input",
            json.dumps({"event": event}),
        )
        result: dict[str, Any] = run.json()["updateResult"]
        return result

    started = await submit_with_start("wake up")
    joined = await submit_with_start("you are awake")

    assert started["marker"]["text"] == "wake up"
    assert joined["marker"]["text"] == "you are awake"
    assert joined["marker"]["conversation_id"] == started["marker"]["conversation_id"]


async def test_deliver_then_poll_the_marker(harness: Harness, stack: Edge) -> None:
    handle = await running_agent(harness)
    event = event_json("no need to wait for me")

    signal = await temporal_cli(
        stack,
        "workflow",
        "signal",
        "--workflow-id",
        names.agent_workflow_id(handle),
        "--name",
        names.DELIVER,
        "--input",
        json.dumps({"event": event}),
    )
    assert signal.returncode == 0, signal.stderr

    async def marker() -> dict[str, Any] | None:
        run = await temporal_cli(
            stack,
            "workflow",
            "query",
            "--workflow-id",
            names.agent_workflow_id(handle),
            "--name",
            names.MARKER,
            "--input",
            json.dumps({"event_id": event["event_id"]}),
        )
        answer: dict[str, Any] = run.json()["queryResult"][0]
        found: dict[str, Any] | None = answer["marker"]
        return found

    found = await eventually(marker, what="the completion marker")
    assert found["event_id"] == event["event_id"]
    assert found["outcome"] == "spoke"
    assert found["text"] == "no need to wait for me"


async def test_list_finds_a_conversations_activations(harness: Harness, stack: Edge) -> None:
    handle = await running_agent(harness)
    first = (await submit(stack, handle, event_json("first"))).json()["result"]["marker"]
    conversation = first["conversation_id"]
    second = (
        await submit(stack, handle, event_json("second", conversation_id=conversation))
    ).json()["result"]["marker"]
    assert second["conversation_id"] == conversation
    expected = {names.activation_workflow_id(m["activation_id"]) for m in (first, second)}

    async def activations() -> list[dict[str, Any]] | None:
        run = await temporal_cli(
            stack,
            "workflow",
            "list",
            "--query",
            f"{names.CONVERSATION.name}='{conversation}' AND WorkflowType='ActivationWorkflow'",
        )
        # One JSON array of executions; visibility lags the writes, so it may still be short.
        rows: list[dict[str, Any]] = run.json()
        found = {row["execution"]["workflowId"] for row in rows}
        return rows if found >= expected else None

    rows = await eventually(activations, what="both activations in visibility")
    assert {row["execution"]["workflowId"] for row in rows} == expected
    assert {row["type"]["name"] for row in rows} == {"ActivationWorkflow"}
    assert {row["taskQueue"] for row in rows} == {harness.task_queue}


async def test_a_non_ulid_conversation_id_is_rejected_naming_the_field(
    harness: Harness, stack: Edge
) -> None:
    handle = await running_agent(harness)

    run = await submit(stack, handle, event_json("continue", conversation_id="yesterdays-chat"))

    assert run.returncode != 0
    assert "event.conversation_id" in run.stderr
    assert "'yesterdays-chat' is not a ULID" in run.stderr
    # Rejected before it entered the inbox: the agent still answers the next event.
    receipt = (await submit(stack, handle, event_json("still there?"))).json()["result"]
    assert receipt["marker"]["text"] == "still there?"


async def test_a_malformed_deliver_is_refused_in_its_marker(harness: Harness, stack: Edge) -> None:
    """Signals cannot answer, so a refused event's marker says why (naming the field)."""
    handle = await running_agent(harness)
    bad = event_json("lost", conversation_id="yesterdays-chat")
    good = event_json("kept")

    async def deliver(event: dict[str, Any]) -> Run:
        return await temporal_cli(
            stack,
            "workflow",
            "signal",
            "--workflow-id",
            names.agent_workflow_id(handle),
            "--name",
            names.DELIVER,
            "--input",
            json.dumps({"event": event}),
        )

    async def marker(event: dict[str, Any]) -> dict[str, Any]:
        run = await temporal_cli(
            stack,
            "workflow",
            "query",
            "--workflow-id",
            names.agent_workflow_id(handle),
            "--name",
            names.MARKER,
            "--input",
            json.dumps({"event_id": event["event_id"]}),
        )
        answer: dict[str, Any] = run.json()["queryResult"][0]
        return answer

    assert (await deliver(bad)).returncode == 0  # the server accepts any signal
    assert (await deliver(good)).returncode == 0

    async def good_marker() -> dict[str, Any] | None:
        found: dict[str, Any] | None = (await marker(good))["marker"]
        return found

    assert (await eventually(good_marker, what="the valid event's marker"))["text"] == "kept"
    # Signals are handled in order, so the malformed one was seen first: refused, not queued.
    refused = await marker(bad)
    assert refused["pending"] is False
    assert refused["marker"]["outcome"] == "failed"
    assert "event.conversation_id" in refused["marker"]["reason"]
    assert "'yesterdays-chat' is not a ULID" in refused["marker"]["reason"]
