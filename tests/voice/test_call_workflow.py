"""``CallWorkflow``: a call kept until hang-up or an idle spell, and replayed deterministically.

PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept, never
rewritten: a change to the workflow must replay them (``workflow.patched``).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from temporalio.client import Client, WorkflowHistory
from temporalio.testing import WorkflowEnvironment

from contract import names
from schemas.ids import new_ulid
from schemas.voice import (
    CallConclusion,
    CallDirection,
    CallState,
    CallTurnSignal,
    ConclusionsTaken,
    HangUp,
    StartCallInput,
)
from tests.harness import Stack, record_new_histories, replayer, running_worker, unique

HISTORIES = Path(__file__).parent / "histories"
NAME = "call"


async def test_a_call_keeps_its_session_until_hang_up_and_replays(
    client: Client, stack: Stack
) -> None:
    async with running_worker(client, stack) as harness:
        call_id = unique("call")
        start = StartCallInput(
            call_id=call_id, agent="ada", direction=CallDirection.INBOUND, tenant="t"
        )
        handle = await client.start_workflow(
            names.CALL_WORKFLOW,
            start,
            id=names.call_workflow_id(call_id),
            task_queue=harness.task_queue,
            result_type=CallState,
        )
        conversation = new_ulid()
        await handle.signal(names.CALL_TURN, CallTurnSignal(conversation_id=conversation))
        await handle.signal(names.CALL_TURN, CallTurnSignal(conversation_id=new_ulid()))
        first, second = new_ulid(), new_ulid()
        await handle.signal(names.CALL_CONCLUSION, CallConclusion(activation_id=first))
        await handle.signal(names.CALL_CONCLUSION, CallConclusion(activation_id=first))
        await handle.signal(names.CALL_CONCLUSION, CallConclusion(activation_id=second))
        await handle.signal(names.CONCLUSIONS_TAKEN, ConclusionsTaken(count=1))
        await handle.signal(names.HANG_UP, HangUp())
        ended = await handle.result()
        history = await handle.fetch_history()
    # The first turn names the conversation for good; what was woven in leaves the queue.
    assert ended.conversation_id == conversation
    assert (ended.turns, ended.pending, ended.ended) == (2, [second], "hang-up")
    record_new_histories(HISTORIES, {NAME: history})
    await replayer(client).replay_workflow(history)


async def test_the_recorded_call_history_replays(client: Client) -> None:
    path = HISTORIES / f"{NAME}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{NAME}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)


async def test_a_call_nobody_speaks_on_ends_when_idle(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    async with running_worker(skipping.client, stack) as harness:
        call_id = unique("call")
        start = StartCallInput(
            call_id=call_id,
            agent="ada",
            direction=CallDirection.OUTBOUND,
            tenant="",
            idle_timeout_s=120,
        )
        handle = await skipping.client.start_workflow(
            names.CALL_WORKFLOW,
            start,
            id=names.call_workflow_id(call_id),
            task_queue=harness.task_queue,
            result_type=CallState,
        )
        await handle.signal(names.CALL_TURN, CallTurnSignal())
        await skipping.sleep(timedelta(seconds=60))
        await handle.signal(names.CALL_TURN, CallTurnSignal())  # a turn resets the idle timer
        await skipping.sleep(timedelta(seconds=90))
        state: CallState = await handle.query(names.CALL_STATE, result_type=CallState)
        assert state.ended is None
        ended = await handle.result()
    assert (ended.ended, ended.turns) == ("idle", 2)
