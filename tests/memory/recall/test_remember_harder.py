"""Remember harder: the verbatim turns behind a memory, and clear refusals."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from activities.memory.remember import (
    ForgottenMemoryError,
    RememberActivities,
    UnknownMemoryError,
    remember_harder,
)
from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef, Wire
from schemas.ids import InvalidIdError, new_ulid
from schemas.recall import RememberHarderInput, RememberHarderResult
from store.db import Database
from store.queries.dialog import open_conversation, record_turn
from tests.harness import Harness, unique
from tests.memory.recall.records import NOW, add_channel, add_memory, new_agent

CHANNEL = ChannelRef(service="terminal", channel="porch")
ADA = new_ulid()
LINES = [
    (Role.PERSON, "Could you water my tomatoes while I'm in Lisbon?"),
    (Role.AGENT, "Yes. Every evening, or only when it's dry?"),
    (Role.PERSON, "Only when it hasn't rained for two days."),
    (Role.AGENT, "Understood: after two dry days, I'll water them."),
    (Role.PERSON, "Thanks! Anyway, how was your week?"),
]


@dataclass
class Porch:
    agent: str
    conversation: str
    turns: list[str]
    ranged: str
    whole: str
    forgotten: str
    loose: str


@pytest.fixture(scope="module")
async def porch(db: Database) -> Porch:
    agent = await new_agent(db, "remember")
    channel_id = await add_channel(db, agent, CHANNEL)
    conversation = new_ulid()
    async with db.session() as session:
        await open_conversation(
            session, conversation_id=conversation, agent=agent, channel=CHANNEL, opened_at=NOW
        )
    turns = []
    for i, (role, said) in enumerate(LINES):
        turn = DialogTurn(
            turn_id=new_ulid(),
            conversation_id=conversation,
            role=role,
            speaker_id=ADA if role is Role.PERSON else agent,
            speaker_name="Ada" if role is Role.PERSON else "Recall Test",
            text=said,
            at=NOW + timedelta(seconds=i),
        )
        async with db.session() as session:
            await record_turn(session, agent=agent, channel=CHANNEL, turn=turn)
        turns.append(turn.turn_id)
    common: dict[str, Any] = {"agent": agent, "channel_id": channel_id, "participants": [ADA]}
    summary = "I promised Ada to water her tomatoes after two dry days."
    return Porch(
        agent=agent,
        conversation=conversation,
        turns=turns,
        ranged=await add_memory(
            db,
            **common,
            summary=summary,
            conversation_id=conversation,
            turn_first=turns[0],
            turn_last=turns[3],
        ),
        whole=await add_memory(
            db, **common, summary="I chatted with Ada.", conversation_id=conversation
        ),
        forgotten=await add_memory(
            db,
            **common,
            summary=summary,
            conversation_id=conversation,
            forgotten_at=NOW,
        ),
        loose=await add_memory(db, **common, summary="Something I was told once."),
    )


async def test_a_ranged_memory_gives_exactly_its_turns_in_order(db: Database, porch: Porch) -> None:
    result = await remember_harder(db, agent=porch.agent, record_id=porch.ranged)
    assert [t.turn_id for t in result.turns] == porch.turns[:4]
    assert [t.text for t in result.turns] == [said for _, said in LINES[:4]]
    assert result.record.id == porch.ranged and not result.truncated and result.note is None


async def test_a_memory_without_a_range_gives_its_conversation(db: Database, porch: Porch) -> None:
    result = await remember_harder(db, agent=porch.agent, record_id=porch.whole)
    assert [t.turn_id for t in result.turns] == porch.turns


async def test_the_limit_truncates_and_says_so(db: Database, porch: Porch) -> None:
    result = await remember_harder(db, agent=porch.agent, record_id=porch.whole, limit=2)
    assert [t.turn_id for t in result.turns] == porch.turns[:2]
    assert result.truncated


async def test_a_memory_without_a_conversation_says_why_there_is_no_dialog(
    db: Database, porch: Porch
) -> None:
    result = await remember_harder(db, agent=porch.agent, record_id=porch.loose)
    assert result.turns == [] and result.note is not None


async def test_lower_case_ids_are_accepted(db: Database, porch: Porch) -> None:
    result = await remember_harder(db, agent=porch.agent, record_id=porch.ranged.lower())
    assert result.record.id == porch.ranged


async def test_refusals_are_one_clear_line(db: Database, porch: Porch) -> None:
    stranger = await new_agent(db, "stranger")
    refusals: list[tuple[str, str, type[Exception], str]] = [
        (stranger, porch.ranged, UnknownMemoryError, f"agent '{stranger}' has no memory"),
        (porch.agent, new_ulid(), UnknownMemoryError, "has no memory"),
        (porch.agent, porch.forgotten, ForgottenMemoryError, "was forgotten on 2026-11-30"),
        (porch.agent, "not-a-memory", InvalidIdError, "memory id 'not-a-memory' is not a ULID"),
        (porch.agent, "", InvalidIdError, "is not a ULID"),
    ]
    for agent, record_id, error, message in refusals:
        with pytest.raises(error, match=message) as caught:
            await remember_harder(db, agent=agent, record_id=record_id)
        assert "\n" not in str(caught.value)


async def test_the_activity_refuses_without_retrying(db: Database, porch: Porch) -> None:
    activities = RememberActivities(db)
    with pytest.raises(ApplicationError) as caught:
        await activities.remember_harder(
            RememberHarderInput(agent=porch.agent, record_id=porch.forgotten)
        )
    assert caught.value.type == "ForgottenMemoryError" and caught.value.non_retryable


class AskInput(Wire):
    task_queue: str
    ask: RememberHarderInput


@workflow.defn(name="RememberHarderProbe", sandboxed=False)
class RememberHarderProbe:
    """Calls the worker's ``memory.remember_harder`` activity by name, as the pipeline will."""

    @workflow.run
    async def run(self, data: AskInput) -> RememberHarderResult:
        result: RememberHarderResult = await workflow.execute_activity(
            "memory.remember_harder",
            data.ask,
            task_queue=data.task_queue,
            result_type=RememberHarderResult,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=RetryPolicy(maximum_attempts=3),
        )
        return result


async def test_the_worker_serves_remember_harder(
    client: Client, harness: Harness, porch: Porch
) -> None:
    probe_queue = unique("probe")
    async with Worker(
        client,
        task_queue=probe_queue,
        workflows=[RememberHarderProbe],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):

        async def ask(record_id: str) -> RememberHarderResult:
            result: RememberHarderResult = await client.execute_workflow(
                RememberHarderProbe.run,
                AskInput(
                    task_queue=harness.task_queue,
                    ask=RememberHarderInput(agent=porch.agent, record_id=record_id),
                ),
                id=unique("probe"),
                task_queue=probe_queue,
            )
            return result

        result = await ask(porch.ranged)
        assert [t.turn_id for t in result.turns] == porch.turns[:4]
        with pytest.raises(WorkflowFailureError) as caught:
            await ask(new_ulid())
    cause = caught.value.cause
    assert isinstance(cause, ActivityError) and isinstance(cause.cause, ApplicationError)
    assert cause.cause.type == "UnknownMemoryError"
    assert cause.retry_state is not None and cause.retry_state.name == "NON_RETRYABLE_FAILURE"
