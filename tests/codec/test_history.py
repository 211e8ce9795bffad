"""The client and the worker seal payloads: Temporal's store holds ciphertext, Persyn reads
it back through the codec, and histories replay (fresh sealed ones and old plain ones)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory, WorkflowUpdateRPCTimeoutOrCancelledError

from contract import names
from schemas.events import Outcome
from temporal.client import connect, keyring
from temporal.codec import ENCODING
from tests.harness import Stack, replayer, running_worker, until

SECRET = "TANGERINE-forty-two"
RECORDED = sorted((Path(__file__).parent.parent / "histories").glob("*.json"))


@pytest.fixture(scope="module")
async def sealed_client(stack: Stack) -> AsyncIterator[Client]:
    client = await connect(stack.settings(), address=stack.temporal_address, codec=True)
    yield client
    del client
    gc.collect()


async def test_history_holds_ciphertext_that_the_codec_opens(
    sealed_client: Client, stack: Stack
) -> None:
    async with running_worker(sealed_client, stack) as harness:
        agent = await harness.create_agent()
        receipt = await harness.say(agent.handle, f"The password is {SECRET}.")
        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE
        assert marker.text is not None and SECRET in marker.text  # the scripted echo
        assert marker.conversation_id and marker.activation_id
        histories = {
            workflow_id: await sealed_client.get_workflow_handle(workflow_id).fetch_history()
            for workflow_id in (
                names.agent_workflow_id(agent.handle),
                names.conversation_workflow_id(marker.conversation_id),
                names.activation_workflow_id(marker.activation_id),
            )
        }
    for workflow_id, history in histories.items():
        raw = history.to_json()
        assert SECRET not in raw, f"{workflow_id} holds the text in the clear"
        assert base64.b64encode(ENCODING).decode() in raw  # metadata is base64 in the JSON

    # The text is there, sealed: the agent's submit update carried it.
    agent_history = histories[names.agent_workflow_id(agent.handle)]
    [accepted] = [
        e
        for e in agent_history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]
    sealed = accepted.workflow_execution_update_accepted_event_attributes.accepted_request
    [payload] = sealed.input.args.payloads
    assert payload.metadata["encoding"] == ENCODING
    codec = sealed_client.data_converter.payload_codec
    assert codec is not None
    [opened] = await codec.decode([payload])
    assert SECRET.encode() in opened.data

    # A replayer configured as the workers are replays the sealed histories.
    for history in histories.values():
        await replayer(sealed_client).replay_workflow(history)


async def test_a_shredded_agents_run_fails_its_task_while_the_worker_serves_others(
    sealed_client: Client, stack: Stack
) -> None:
    async with running_worker(sealed_client, stack) as first:
        shredded, kept = await first.create_agent(), await first.create_agent()
        for agent in (shredded, kept):
            assert (await first.say(agent.handle, "hello")).marker is not None
    await keyring(stack.settings()).shred(shredded.handle)
    agent_run = sealed_client.get_workflow_handle(names.agent_workflow_id(shredded.handle))
    # A new worker has no run cached: it must replay each history, and cannot read the
    # shredded agent's.
    async with running_worker(sealed_client, stack, task_queue=first.task_queue) as fresh:
        pending = asyncio.create_task(fresh.say(shredded.handle, "are you there?"))
        failures: list[str] = []

        async def task_failed() -> bool:
            async for e in agent_run.fetch_history_events():
                if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
                    failures.append(e.workflow_task_failed_event_attributes.failure.message)
            return bool(failures)

        await until(task_failed, timeout=60)
        assert f"payload shredded: the key of agent '{shredded.handle}'" in failures[0]
        receipt = await fresh.say(kept.handle, "still there?")
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError, WorkflowUpdateRPCTimeoutOrCancelledError):
            await pending
        await agent_run.terminate(reason="its key was shredded")


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
async def test_histories_recorded_before_the_codec_replay_through_it(
    sealed_client: Client, path: Path
) -> None:
    assert sealed_client.data_converter.payload_codec is not None  # the codec is on
    history = WorkflowHistory.from_json(path.stem, await asyncio.to_thread(path.read_text))
    await replayer(sealed_client).replay_workflow(history)
