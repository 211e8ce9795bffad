"""A scripted month folds into levels through the real workflow: six days into each level-2
recollection, six of those into one of level 3, each written as of its moment (no folding
prompt holds anything later than its range), linked up and down, fenced, and replayable."""

from __future__ import annotations

import json
import re
from datetime import date

from sqlalchemy import text
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from schemas.folding import FoldingInput, FoldMode
from schemas.models import ModelRequest, TaskType
from tests.fences import ATTACK, only_fenced
from tests.harness import Stack, replayer, running_worker
from tests.memory.folding.month import DAYS, days_in, live_a_month
from workflows.folding import FoldingWorkflow

RECOLLECTION = "Over those days I kept helping Max with his garden, step by step."
RULES = [ScriptRule(task="fold", reply=json.dumps({"summary": RECOLLECTION}))]
_DATE = re.compile(r"\b(\d{4})-(\d\d)-(\d\d)\b")


def _prompt(request: ModelRequest) -> str:
    return request.system + "\n" + "\n".join(m.content for m in request.messages)


def _dates(prompt: str) -> list[date]:
    return [date(int(y), int(m), int(d)) for y, m, d in _DATE.findall(prompt)]


async def test_a_month_folds_into_levels_as_of_each_moment(client: Client, stack: Stack) -> None:
    async with running_worker(client, stack, rules=RULES) as harness:
        agent = (await harness.create_agent()).handle
        month = await live_a_month(harness.db, harness.deps.encoder, agent=agent, attack=ATTACK)
        handle = await client.start_workflow(
            FoldingWorkflow.run,
            FoldingInput(agent=agent),
            id=names.folding_workflow_id(agent),
            task_queue=harness.task_queue,
        )
        result = await handle.result()
        assert len(result.folded) == DAYS // 6 + 1  # six of level 2, one of level 3

        async with harness.db.session() as session:
            rows = (
                await (await session.connection()).execute(
                    text(
                        "SELECT id, level, folded_into, derived_from, summary, turn_first_at, "
                        "turn_last_at, rubric, embedding IS NOT NULL AS embedded "
                        "FROM memory_records WHERE agent = :a ORDER BY level, id"
                    ),
                    {"a": agent},
                )
            ).all()
        by_level = {level: [r for r in rows if r.level == level] for level in (1, 2, 3)}
        assert [len(by_level[level]) for level in (1, 2, 3)] == [DAYS, DAYS // 6, 1]
        [top] = by_level[3]
        # Linked both ways: each level-2 folds six consecutive days, the top folds them all.
        for number, middle in enumerate(by_level[2]):
            days = month.records[number * 6 : number * 6 + 6]
            assert list(middle.derived_from) == days
            assert {r.folded_into for r in by_level[1] if r.id in days} == {middle.id}
            assert middle.folded_into == top.id
            assert middle.summary == RECOLLECTION and middle.rubric["mode"] == FoldMode.MODEL
            assert middle.embedded  # recall finds it by meaning
        assert list(top.derived_from) == [r.id for r in by_level[2]]
        assert top.folded_into is None
        assert (top.turn_first_at, top.turn_last_at) == (
            by_level[1][0].turn_first_at,
            by_level[1][-1].turn_last_at,
        )

        folds = [r for r in harness.provider.requests if r.task is TaskType.FOLD]
        assert len(folds) == len(result.folded)
        for number, request in enumerate(folds[:6]):
            prompt = _prompt(request)
            # Exactly its six days: none later, and none from another batch but the summary
            # of the one before (which names no day).
            assert days_in(prompt) == list(range(number * 6 + 1, number * 6 + 7))
            end = by_level[2][number].turn_last_at.date()
            assert max(_dates(prompt)) == end
            if number:
                assert RECOLLECTION in prompt  # the stretch before, as it looked from its end
        top_prompt = _prompt(folds[-1])
        assert days_in(top_prompt) == []
        assert max(_dates(top_prompt)) == top.turn_last_at.date()
        # An attack in a memory reaches the fold only as fenced material.
        only_fenced(folds[0].messages[-1].content, ATTACK)

        history = await handle.fetch_history()
    await replayer(client).replay_workflow(history)


async def test_a_second_pass_finds_nothing_to_fold(client: Client, stack: Stack) -> None:
    async with running_worker(client, stack, rules=RULES) as harness:
        agent = (await harness.create_agent()).handle
        await live_a_month(harness.db, None, agent=agent, days=8)
        first = await client.execute_workflow(
            FoldingWorkflow.run,
            FoldingInput(agent=agent),
            id=names.folding_workflow_id(agent),
            task_queue=harness.task_queue,
        )
        again = await client.execute_workflow(
            FoldingWorkflow.run,
            FoldingInput(agent=agent),
            id=names.folding_workflow_id(agent) + "-again",
            task_queue=harness.task_queue,
        )
    # Eight days: one batch of six folds; two wait for four more.
    assert len(first.folded) == 1
    assert again.folded == []
