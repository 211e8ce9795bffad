"""A hostile integrator with the real `temporal` CLI: every handler, wrong types, naive times,
forged IDs, replayed markers, payloads from 0 bytes to past the server's limit.

Each case is sent by the CLI binary as a subprocess. Afterwards the agent must still answer the
next message, within its normal latency, and its workflows must show no failed workflow task.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowQueryFailedError, WorkflowUpdateFailedError
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

from contract import names
from contract.catalog import HANDLERS
from schemas.ids import new_ulid
from schemas.voice import CallDirection, HangUp, StartCallInput
from tests.harness import Harness
from tests.integration.edge import Edge
from tests.integration.test_temporal_cli import Run, event_json, running_agent, submit, temporal_cli
from usecases.voice import call_state, open_call
from workflows.handlers import INVALID_INPUT

NAIVE = "2026-05-01T09:30:00"
SERVER_LIMIT = 2 * 1024 * 1024
"""Temporal's default blob size limit: a signal past it is refused by the server itself."""

JUST_UNDER = SERVER_LIMIT - 100 * 1024
"""An update this big is still answered: its refusal echoes the request, and must fit too."""


async def signal(stack: Edge, workflow_id: str, name: str, *inputs: str, meta: str = "") -> Run:
    args = ["workflow", "signal", "--workflow-id", workflow_id, "--name", name]
    for value in inputs:
        args += ["--input", value]
    if meta:
        args += ["--input-meta", meta]
    return await temporal_cli(stack, *args)


async def signal_file(stack: Edge, workflow_id: str, name: str, path: Path) -> Run:
    return await temporal_cli(
        stack, "workflow", "signal", "--workflow-id", workflow_id, "--name", name,
        "--input-file", str(path),
    )  # fmt: skip


async def update(
    stack: Edge,
    handle: str,
    payload: str,
    *,
    update_id: str | None = None,
    meta: Sequence[str] = (),
) -> Run:
    return await temporal_cli(
        stack, "workflow", "update", "execute", "--workflow-id", names.agent_workflow_id(handle),
        "--name", names.SUBMIT, "--update-id", update_id or new_ulid(), "--input", payload, *meta,
    )  # fmt: skip


async def update_file(stack: Edge, handle: str, path: Path) -> Run:
    return await temporal_cli(
        stack, "workflow", "update", "execute", "--workflow-id", names.agent_workflow_id(handle),
        "--name", names.SUBMIT, "--update-id", new_ulid(), "--input-file", str(path),
    )  # fmt: skip


async def query(
    stack: Edge, workflow_id: str, name: str, *inputs: str, meta: Sequence[str] = ()
) -> Run:
    args = ["workflow", "query", "--workflow-id", workflow_id, "--name", name]
    for value in inputs:
        args += ["--input", value]
    return await temporal_cli(stack, *args, *meta)


async def task_failures(harness: Harness, workflow_id: str) -> int:
    failures = 0
    async for execution in harness.client.list_workflows(f"WorkflowId = '{workflow_id}'"):
        handle = harness.client.get_workflow_handle(workflow_id, run_id=execution.run_id)
        history = await handle.fetch_history()
        failures += sum(
            1 for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
        )
    return failures


async def answers_normally(stack: Edge, handle: str, *, baseline: float) -> None:
    """The agent answers the next message, and not much slower than before the attack."""
    started = time.monotonic()
    receipt = (await submit(stack, handle, event_json("are you still there?"))).json()["result"]
    took = time.monotonic() - started
    assert receipt["marker"]["outcome"] == "spoke"
    assert receipt["marker"]["text"] == "are you still there?"
    # Normal latency, with slack for a shared two-core machine.
    assert took < max(5 * baseline, baseline + 5.0), (took, baseline)


async def test_wrong_input_to_every_public_handler_is_refused_naming_the_field(
    harness: Harness, stack: Edge
) -> None:
    handle = await running_agent(harness)
    started = time.monotonic()
    first = (await submit(stack, handle, event_json("hello"))).json()["result"]
    baseline = time.monotonic() - started

    def bad(**fields: Any) -> str:
        return json.dumps({"event": {**event_json("x"), **fields}})

    cases = {
        "event.text": bad(text=123),
        "event.event_id": bad(event_id="01JD3M6Z8Q4N1V5X7B2C9E0F1U"),  # U is not base32
        "event.channel": bad(channel="web"),
        "event.speaker.speaker_id": bad(speaker={"speaker_id": "   "}),
        "event.addressed": bad(addressed="perhaps"),
        "event.sent_at": bad(sent_at=NAIVE),
        "event.trigger": bad(trigger="heartbeat"),
        "event.channel.service": bad(channel={"service": "self", "channel": "reflection"}),
        "event.colour": bad(colour="red"),
        "payload": "null",
    }
    for field, payload in cases.items():
        run = await update(stack, handle, payload)
        assert run.returncode != 0, field
        assert field in run.stderr and "invalid submit input" in run.stderr, (field, run.stderr)

    # A forged conversation ID is well-formed: it is answered with a failed marker, not run.
    forged = event_json("continue that", conversation_id=new_ulid())
    receipt = (await submit(stack, handle, forged)).json()["result"]
    assert receipt["marker"]["outcome"] == "failed" and "not open" in receipt["marker"]["reason"]

    agent = names.agent_workflow_id(handle)
    marker_bad = await query(stack, agent, names.MARKER, json.dumps({"event_id": 42}))
    assert marker_bad.returncode != 0 and "event_id" in marker_bad.stderr
    status_bad = await query(stack, agent, names.STATUS, json.dumps({"verbose": True}))
    assert status_bad.returncode != 0 and "verbose" in status_bad.stderr
    status = (await query(stack, agent, names.STATUS)).json()["queryResult"][0]
    assert status["handle"] == handle and status["handled"] == 1  # the forged one never ran
    conversation = names.conversation_workflow_id(first["marker"]["conversation_id"])
    window = (await query(stack, conversation, names.WINDOW)).json()["queryResult"][0]
    assert [t["text"] for t in window["window"]][:2] == ["hello", "hello"]
    window_bad = await query(stack, conversation, names.WINDOW, "[1, 2]")
    assert window_bad.returncode != 0 and "invalid window input" in window_bad.stderr

    await answers_normally(stack, handle, baseline=baseline)
    assert await task_failures(harness, agent) == 0


async def test_every_signal_survives_garbage_naive_times_forged_ids_and_replays(
    harness: Harness, stack: Edge
) -> None:
    handle = await running_agent(harness)
    started = time.monotonic()
    first = (await submit(stack, handle, event_json("hello"))).json()["result"]
    baseline = time.monotonic() - started
    agent = names.agent_workflow_id(handle)
    conversation_id = first["marker"]["conversation_id"]
    conversation = names.conversation_workflow_id(conversation_id)
    event = event_json("hi", sent_at=NAIVE)
    old_marker = first["marker"]
    garbage = ["null", '"text"', "42", "[]", "{}", '{"unknown": 1}']
    specific: dict[str, list[dict[str, Any]]] = {
        names.DELIVER: [{"event": event}, {"event": {**event_json("x"), "trigger": "reminder"}}],
        names.IMPULSE: [
            {"event_id": new_ulid(), "trigger": "heartbeat", "text": "x", "at": NAIVE},
            {"event_id": new_ulid(), "trigger": "message", "text": "x", "at": NAIVE + "Z"},
        ],
        names.ACTIVATION_FINISHED: [
            {"marker": {**old_marker, "completed_at": NAIVE, "expires_at": NAIVE}},
            # A replay of the real, old completion with other text.
            {"marker": {**old_marker, "text": "FORGED"}},
            # A forged completion for an event the agent never had.
            {"marker": {**old_marker, "event_id": new_ulid(), "activation_id": new_ulid()}},
        ],
        names.CONVERSATION_CLOSED: [
            {
                "conversation_id": conversation_id,
                "channel_key": "web:cli-integration",
                "closed_at": NAIVE,
                "reason": "forged",
            }
        ],
        names.INBOUND: [{"event": event, "person_id": new_ulid(), "person_name": "M"}],
        names.TURN_TAKEN: [
            {
                "inbound": {"event": event, "person_id": new_ulid(), "person_name": "M"},
                "turn": {
                    "turn_id": new_ulid(),
                    "conversation_id": conversation_id,
                    "role": "person",
                    "speaker_id": "not-an-id",
                    "text": "forged",
                    "at": NAIVE,
                },
            }
        ],
        # A forged end of an exchange the conversation never took.
        names.EXCHANGE_DONE: [{"activation_id": new_ulid(), "event_id": new_ulid()}],
        names.FORGET_TURNS: [{"before": NAIVE}],
        names.PERSON_FOLDED: [{"folded": "not-an-id", "survivor": new_ulid()}],
        # Only refusals: a valid one would close the conversation the later signals target.
        names.END_CONVERSATION: [
            {"reason": ""},
            {"reason": "x" * 301},
            {"reason": "forged", "firing_id": "not-an-id"},
        ],
        # A call's session: ids that are not ids, a count out of range, an oversize reason.
        names.CALL_TURN: [{"conversation_id": "not-an-id"}],
        names.CALL_CONCLUSION: [{"activation_id": "not-an-id"}, {"activation_id": NAIVE}],
        names.CONCLUSIONS_TAKEN: [{"count": -1}, {"count": "many"}, {"count": 10**9}],
        names.HANG_UP: [{"reason": "x" * 201}],
        # The call's hold: no idle time, an ID no call has; an end naming no call (all internal:
        # unsigned from the CLI, dropped before they are read).
        names.CALL_BEGAN: [
            {"call_id": "c-1", "tenant": "t", "idle_timeout_s": 0},
            {"call_id": "c-1", "tenant": "t", "idle_timeout_s": 60},
        ],
        names.CALL_ENDED: [{"call_id": "x" * 129, "reason": "forged"}],
    }
    call = StartCallInput(
        call_id=f"hostile-{new_ulid()}",
        agent=handle,
        direction=CallDirection.INBOUND,
        tenant="hostile",
    )
    on_queue = harness.deps.settings.model_copy(update={"task_queue": harness.task_queue})
    await open_call(client=harness.client, settings=on_queue, start=call)
    targets = {
        "AgentWorkflow": agent,
        "ConversationWorkflow": conversation,
        "CallWorkflow": names.call_workflow_id(call.call_id),
    }
    signals = [h for h in HANDLERS if h.kind == "signal"]
    assert {h.name for h in signals} == set(specific), "a signal this suite does not cover"
    for spec in signals:
        target = targets[spec.workflow]
        for payload in [*garbage, *(json.dumps(p) for p in specific[spec.name])]:
            run = await signal(stack, target, spec.name, payload)
            assert run.returncode == 0, run.stderr  # the server takes any signal
        # Two payloads, and one in an encoding no Persyn worker reads.
        assert (await signal(stack, target, spec.name, "{}", "{}")).returncode == 0
        assert (await signal(stack, target, spec.name, "{}", meta="encoding=x/y")).returncode == 0

    # The call's signals are internal: from a namespace client without Persyn's key even a
    # valid turn or hang-up (``{}``) is dropped, so the call is as it started, and open, and
    # still holds the agent's lock (an unsigned call_ended gave nothing back, and an unsigned
    # call_began for another call took nothing).
    assert await task_failures(harness, targets["CallWorkflow"]) == 0
    state = await call_state(client=harness.client, call_id=call.call_id)
    assert state is not None and state.ended is None
    assert (state.turns, state.conversation_id, state.pending) == (0, None, [])
    status = (await query(stack, agent, names.STATUS)).json()["queryResult"][0]
    assert status["call"]["call"]["call_id"] == call.call_id and status["calls_waiting"] == 0
    # Signed by Persyn's own client, the hang-up ends the call and gives the lock back.
    await harness.client.get_workflow_handle(targets["CallWorkflow"]).signal(
        names.HANG_UP, HangUp()
    )
    await harness.client.get_workflow_handle(targets["CallWorkflow"]).result()

    await answers_normally(stack, handle, baseline=baseline)
    marker = await query(stack, agent, names.MARKER, json.dumps({"event_id": first["event_id"]}))
    assert (
        marker.json()["queryResult"][0]["marker"]["text"] == "hello"
    )  # the replay changed nothing
    assert await task_failures(harness, agent) == 0
    assert await task_failures(harness, conversation) == 0


async def test_payloads_from_zero_bytes_past_the_servers_limit(
    harness: Harness, stack: Edge, tmp_path: Path
) -> None:
    handle = await running_agent(harness)
    started = time.monotonic()
    (await submit(stack, handle, event_json("hello"))).json()
    baseline = time.monotonic() - started
    agent = names.agent_workflow_id(handle)

    def file_of(text_chars: int | None, name: str) -> tuple[Path, dict[str, Any]]:
        path = tmp_path / name
        event = event_json("y" * (text_chars or 1))
        path.write_text("" if text_chars is None else json.dumps({"event": event}))
        return path, event

    # The exact limit of the text is accepted; one more character is refused, naming it.
    at_limit, at_event = file_of(32_000, "at-limit.json")
    receipt = (await update_file(stack, handle, at_limit)).json()["result"]
    assert receipt["marker"]["outcome"] == "spoke" and receipt["event_id"] == at_event["event_id"]
    over, _ = file_of(32_001, "over.json")
    refused = await update_file(stack, handle, over)
    assert refused.returncode != 0 and "event.text" in refused.stderr
    assert "32,001 characters; the limit is 32,000" in refused.stderr

    sizes = {"empty": None, "40k": 40_000, "under-limit": JUST_UNDER, "past": SERVER_LIMIT + 1024}
    for label, chars in sizes.items():
        path, event = file_of(chars, f"{label}.json")
        assert path.stat().st_size >= (chars or 0)
        if chars is None or chars < SERVER_LIMIT:
            # Past the limit an update is not sent: see the note on limits in docs/integration.md.
            run = await update_file(stack, handle, path)
            assert run.returncode != 0, label
        sent = await signal_file(stack, agent, names.DELIVER, path)
        if chars is not None and chars > SERVER_LIMIT:
            assert sent.returncode != 0, "the server refuses a payload past its limit"
        elif chars is not None:
            # Taken by the server, refused by the agent: the marker says why.
            assert sent.returncode == 0, sent.stderr
            answer = await query(
                stack, agent, names.MARKER, json.dumps({"event_id": event["event_id"]})
            )
            found = answer.json()["queryResult"][0]["marker"]
            assert found["outcome"] == "failed" and "event.text" in found["reason"], label

    await answers_normally(stack, handle, baseline=baseline)
    assert await task_failures(harness, agent) == 0


async def test_update_with_start_for_an_unknown_handle_leaves_no_failed_run(
    harness: Harness, stack: Edge
) -> None:
    ghost = f"ghost-{new_ulid()[-8:].lower()}"
    event = event_json("anyone home?")
    run = await temporal_cli(
        stack, "workflow", "execute-update-with-start",
        "--workflow-id", names.agent_workflow_id(ghost), "--type", "AgentWorkflow",
        "--task-queue", harness.task_queue, "--id-conflict-policy", "UseExisting",
        "--input", json.dumps({"handle": ghost}),
        "--update-name", names.SUBMIT, "--update-id", event["event_id"],
        "--update-input", json.dumps({"event": event}),
    )  # fmt: skip
    assert run.returncode != 0
    assert f"there is no agent '{ghost}'" in run.stderr

    described = await temporal_cli(
        stack, "workflow", "describe", "--workflow-id", names.agent_workflow_id(ghost)
    )
    status = described.json()["workflowExecutionInfo"]["status"]
    assert status != "WORKFLOW_EXECUTION_STATUS_FAILED", status


async def test_input_that_is_not_json_is_refused_naming_what_to_send(
    harness: Harness, stack: Edge
) -> None:
    handle = await running_agent(harness)
    started = time.monotonic()
    (await submit(stack, handle, event_json("hello"))).json()
    baseline = time.monotonic() - started
    agent = names.agent_workflow_id(handle)

    # The CLI checks JSON itself (`input #1 is not valid JSON`), unless the payload is labelled
    # with another encoding: then the bytes reach the worker, as from any SDK.
    refused_by_cli = await update(stack, handle, "not json")
    assert refused_by_cli.stderr.strip() == "Error: input #1 is not valid JSON"

    not_json = "the payload (8 bytes, encoding text/plain) is not JSON: send one JSON object"
    empty = "the payload is empty (0 bytes): send one JSON object"
    for payload, reason in [("not json", not_json), ("", empty)]:
        meta = ["--input-meta", "encoding=text/plain"]
        runs = {
            names.SUBMIT: await update(stack, handle, payload, meta=meta),
            names.MARKER: await query(stack, agent, names.MARKER, payload, meta=meta),
            names.STATUS: await query(stack, agent, names.STATUS, payload, meta=meta),
        }
        for name, run in runs.items():
            assert run.returncode != 0, name
            assert f"invalid {name} input: {reason}" in run.stderr, (name, run.stderr)
            assert "Failed decoding" not in run.stderr
        assert "(type: InvalidInput, retryable: false)" in runs[names.SUBMIT].stderr
        delivered = await signal(stack, agent, names.DELIVER, payload, meta="encoding=text/plain")
        assert delivered.returncode == 0, delivered.stderr  # taken by the server, dropped
    as_bytes = await update(stack, handle, "{}", meta=["--input-meta", "encoding=binary/plain"])
    assert "invalid submit input: the payload (2 bytes, encoding binary/plain) is not JSON" in (
        as_bytes.stderr
    )

    # What another SDK can send: an empty `json/plain` payload. Refused, not retryable.
    hollow = RawValue(Payload(metadata={"encoding": b"json/plain"}, data=b""))
    workflow = harness.client.get_workflow_handle(agent)
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await workflow.execute_update(names.SUBMIT, hollow, id=new_ulid())
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == INVALID_INPUT
    assert cause.non_retryable and cause.message == f"invalid submit input: {empty}"
    with pytest.raises(WorkflowQueryFailedError, match=re.escape(f"invalid status input: {empty}")):
        await workflow.query(names.STATUS, hollow)

    status = (await query(stack, agent, names.STATUS)).json()["queryResult"][0]
    assert status["handled"] == 1  # nothing that was refused was queued
    await answers_normally(stack, handle, baseline=baseline)
    assert await task_failures(harness, agent) == 0
