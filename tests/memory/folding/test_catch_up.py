"""'What have we been up to?' answered from the highest recollections on a plan that confirms."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from activities.memory.catch_up import NOTHING_YET, asks_what_we_did, stretches, what_we_did
from contract import names
from schemas.folding import FoldingInput
from schemas.ids import new_ulid, ulid_from_parts
from schemas.memory import MemoryRecordPublic
from schemas.models import CallPlan, ProviderName
from store.queries.memory import NewRecord, insert_record
from store.sql import execute
from tests.harness import Stack, running_worker
from workflows.folding import FoldingWorkflow

RECOLLECTION = "Those weeks I helped Max with his garden and his new puppy."


@pytest.mark.parametrize(
    "said",
    [
        "What have we been up to?",
        "so what have we been doing lately",
        "What did we talk about last week?",
        "Catch me up, please.",
        "Remind me what we've talked about",
    ],
)
def test_the_question_is_recognised(said: str) -> None:
    assert asks_what_we_did(said)


@pytest.mark.parametrize(
    "said",
    ["What have you been up to?", "what did we do wrong", "remind me to water the beans at 5"],
)
def test_other_questions_are_left_to_the_model(said: str) -> None:
    assert not asks_what_we_did(said)


@given(st.text(max_size=400))
def test_any_text_is_read_without_error(text: str) -> None:
    assert asks_what_we_did(text) in (True, False)


def _record(summary: str, *, when: datetime, level: int = 1) -> MemoryRecordPublic:
    return MemoryRecordPublic(
        id=ulid_from_parts(when, 1),
        agent="ada",
        channel_id=new_ulid(),
        summary=summary,
        importance=5,
        created_at=when,
        level=level,
    )


def test_stretches_are_told_oldest_first_and_long_ones_cut() -> None:
    late = _record("Most recently, I met Max's sister.", when=datetime(2026, 11, 20, tzinfo=UTC))
    early = _record("word " * 200, when=datetime(2026, 10, 1, tzinfo=UTC), level=2)
    told = what_we_did([late, early])
    assert told.startswith("Looking back over our conversations here: word word")
    assert told.endswith("... Most recently, I met Max's sister.")
    assert what_we_did([]) == NOTHING_YET


def test_the_newest_recollections_are_told_then_the_days_since() -> None:
    def at(day: int) -> datetime:
        return datetime(2026, 10, day, tzinfo=UTC)

    month = [_record(f"weeks to {d}", when=at(d), level=2) for d in (7, 14, 21, 28)]
    since = [_record(f"day {d}", when=at(d)) for d in (29, 30, 31)]
    older = [_record("day 20, another stream", when=at(20))]
    newest_first = sorted([*month, *since, *older], key=lambda r: r.id, reverse=True)
    chosen = stretches(newest_first, most=3)
    assert [r.summary for r in chosen] == [
        "weeks to 28",
        "weeks to 21",
        "weeks to 14",
        "day 31",
        "day 30",
    ]


async def test_a_folded_month_is_told_from_its_recollections(client: Client, stack: Stack) -> None:
    plans = {ProviderName.SCRIPTED: CallPlan(offer_tools=False, confirm_done=True)}
    rules = [ScriptRule(task="fold", reply=json.dumps({"summary": RECOLLECTION}))]
    overrides: dict[str, object] = {"call_plans": plans}
    async with running_worker(client, stack, rules=rules, settings_overrides=overrides) as h:
        agent = (await h.create_agent()).handle
        nothing = await h.say(agent, "What have we been up to?")
        async with h.db.session() as session:
            [turn] = (
                await execute(
                    session,
                    "SELECT person_id, channel_id FROM dialog_turns "
                    "WHERE agent = :a AND role = 'person'",
                    {"a": agent},
                )
            ).all()
            for day in range(1, 8):
                when = datetime(2026, 10, day, 18, tzinfo=UTC)
                await insert_record(
                    session,
                    record=NewRecord(
                        id=ulid_from_parts(when, day),
                        agent=agent,
                        channel_id=turn.channel_id,
                        conversation_id=None,
                        summary=f"Max told me about day {day} in the garden.",
                        importance=5,
                        created_at=when,
                        participants=[turn.person_id],
                        sensitivity="restricted" if day == 7 else "private",
                    ),
                )
            await session.commit()
        await client.execute_workflow(
            FoldingWorkflow.run,
            FoldingInput(agent=agent),
            id=names.folding_workflow_id(agent),
            task_queue=h.task_queue,
        )
        told = await h.say(agent, "What have we been up to?")

    assert nothing.marker is not None and (nothing.marker.text or "").endswith(NOTHING_YET)
    assert told.marker is not None and told.marker.text is not None
    # The six private days are one recollection; the restricted seventh is never told.
    # The whole reply: the model is not asked (its words beside it contradicted it).
    assert told.marker.text == f"Looking back over our conversations here: {RECOLLECTION}"
    assert "day 7" not in told.marker.text
