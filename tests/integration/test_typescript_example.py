"""The TypeScript integrator example (``examples/typescript``) runs against a real deployment.

It submits an event with update-with-start through the codec endpoint, resubmits it, and pulls
what the agent sent on its own to its service, as docs/integration.md tells integrators to; so
the docs it follows cannot drift from what the workers do. Skipped only where Node.js is
missing, and never in CI (``CI=true``), where a missing Node fails it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from contract import names
from store.tables import OutboxRow
from tests.autonomy.conftest import autonomy_worker
from tests.harness import Stack
from tests.integration.conftest import codec_endpoint

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "typescript"
SEALED = b"binary/persyn-encrypted"
TELL_ADA = ScriptRule(
    task="respond",
    match="tell ada",
    after_tool=False,
    tool_calls=[
        ScriptToolCall(
            name="message_contact",
            arguments={"contact": "ada", "text": "Your refund went out.", "channel": "crm:support"},
        )
    ],
)
AFTER_TOOL = ScriptRule(task="respond", after_tool=True, reply="Done: {tool}")


def _node_or_skip() -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if not missing:
        return
    reason = f"{' and '.join(missing)} not installed: the TypeScript example cannot run"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


async def _run(*command: str, env: dict[str, str] | None = None) -> str:
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=EXAMPLE,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=300)
    assert process.returncode == 0, f"{' '.join(command)}: {err.decode()}{out.decode()}"
    return out.decode()


async def _build() -> None:
    """Install once (node_modules stays, gitignored), then compile."""
    if not (EXAMPLE / "node_modules").is_dir():
        await _run("npm", "ci", "--no-audit", "--no-fund")
    await _run("npx", "tsc")


async def _sealed_update_inputs(client: Client, workflow_id: str) -> list[bytes]:
    """The encoding of every update input the agent's history holds, as the client sent it."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    accepted = [
        event.workflow_execution_update_accepted_event_attributes.accepted_request
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]
    return [
        payload.metadata.get("encoding", b"")
        for request in accepted
        for payload in request.input.args.payloads
    ]


async def test_the_typescript_example_submits_reads_its_receipt_and_pulls(
    client: Client, stack: Stack
) -> None:
    _node_or_skip()
    await _build()
    with codec_endpoint(stack) as endpoint:
        async with autonomy_worker(client, stack, rules=[AFTER_TOOL, TELL_ADA]) as harness:
            agent = (await harness.create_agent()).handle
            env = {
                **os.environ,
                "TEMPORAL_ADDRESS": stack.temporal_address,
                "PERSYN_CODEC_ENDPOINT": endpoint,
                "PERSYN_AGENT": agent,
                "PERSYN_TASK_QUEUE": harness.task_queue,
                "PERSYN_SERVICE": "crm",
                "PERSYN_CHANNEL": "support",
                "PERSYN_SPEAKER": "ada",
                "PERSYN_TEXT": "Hi, I'm Ada. Please tell Ada when the refund goes out.",
                "PERSYN_PULL_SECONDS": "60",
            }
            output = await _run("node", "dist/index.js", env=env)
            encodings = await _sealed_update_inputs(client, names.agent_workflow_id(agent))
            async with harness.db.session() as session:
                rows = list(
                    await session.exec(
                        select(OutboxRow)
                        .where(OutboxRow.agent == agent)
                        .order_by(col(OutboxRow.created_at))
                    )
                )

    steps: dict[str, list[dict[str, Any]]] = {}
    for line in output.splitlines():
        parsed = json.loads(line)
        steps.setdefault(parsed["step"], []).append(parsed)
    [receipt] = steps["receipt"]
    assert receipt["status"] == "completed" and receipt["marker"]["outcome"] == "spoke"
    assert steps["resubmitted"] == [{"step": "resubmitted", "identical": True}]
    # One reply for the event submitted twice, and the message the agent sent on its own.
    [reply] = [row for row in rows if not row.unprompted]
    [sent] = [row for row in rows if row.unprompted]
    assert reply.event_id == receipt["event_id"]
    assert receipt["marker"]["text"] == reply.text
    [message] = steps["message"]
    assert (message["message_id"], message["service"], message["channel"]) == (
        sent.id,
        "crm",
        "support",
    )
    assert (message["text"], message["recipients"]) == ("Your refund went out.", ["ada"])
    assert steps["acknowledged"] == [{"step": "acknowledged", "count": 1, "still_kept": 0}]
    assert sent.status == "delivered"
    # Every update the example sent went through the codec endpoint, sealed with the agent's key.
    assert encodings and set(encodings) == {SEALED}
