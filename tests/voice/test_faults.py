"""A call under faults: a slow fast model, a cooldown in force, the worker gone mid-call.

The call is always answered (a holding phrase before dead air), the hard gates hold, and no
turn is lost: the background run waits for a worker and records the turn when one returns.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlmodel import select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from store.queries.guardrails import set_cooldown
from store.tables.guardrails import GuardrailCooldownRow
from store.tables.ledger import UsageRow
from tests.harness import Stack, running_worker, unique, until
from tests.voice.calls import dialog, known_person, say, serving_calls, turn

HOLDING = "Mm-hm, give me a moment."
FAST = [
    ScriptRule(task="voice", match="slow", reply="too late", delay_ms=3_000),
    ScriptRule(task="voice", reply="Spoken: {last}"),
]


async def test_a_fast_model_too_slow_is_a_holding_phrase_and_the_turn_is_kept(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack) as worker:
        settings = stack.settings(
            home=tmp_path, task_queue=worker.task_queue, voice={"fast_timeout_s": 0.5}
        )
        async with serving_calls(settings, client, fast_rules=FAST) as line:
            agent = (await worker.create_agent()).handle
            await known_person(worker.db, agent, "+15550001", "Grace")
            assert await say(line, turn(agent, unique("call"), "a slow one")) == (200, HOLDING)
            await line.runtime.drain()
        rows = await dialog(worker, agent)
        assert [r.text.splitlines()[-1] for r in rows if r.role == "person"] == ["a slow one"]
        assert HOLDING in [r.text for r in rows if r.role == "agent"]


async def test_a_cooldown_in_force_is_said_instead_and_the_pipeline_does_not_run(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack) as worker:
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        async with serving_calls(settings, client, fast_rules=FAST) as line:
            agent = (await worker.create_agent()).handle
            person = await known_person(worker.db, agent, "+15550001", "Grace")
            async with worker.db.session() as session:
                await set_cooldown(
                    session,
                    row=GuardrailCooldownRow(
                        agent=agent,
                        scope="person",
                        key=person,
                        until=datetime.now(UTC) + timedelta(hours=1),
                        rule_id="abuse",
                    ),
                )
            status, words = await say(line, turn(agent, unique("call"), "hello"))
            await line.runtime.drain()
        assert status == 200 and words.startswith("I'm taking a break") and "abuse" in words
        assert "Spoken" not in words, "nothing the fast model wrote is said past the gate"
        assert await dialog(worker, agent) == [], "nor does the pipeline run"


async def test_a_worker_gone_mid_call_loses_no_turn(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    queue = unique("tq")
    settings = stack.settings(home=tmp_path, task_queue=queue)
    async with serving_calls(settings, client, fast_rules=FAST) as line:
        async with running_worker(client, stack, task_queue=queue) as worker:
            agent = (await worker.create_agent()).handle
            await known_person(worker.db, agent, "+15550001", "Grace")
            call = unique("call")
            assert await say(line, turn(agent, call, "first")) == (200, "Spoken: first")
            await line.runtime.drain()
        # No worker now: the fast path still answers at once; the pipeline's run waits.
        answer = await say(line, turn(agent, call, "first", "Spoken: first", "second"))
        assert answer == (200, "Spoken: second")
        assert line.runtime.tasks, "the turn's background run waits for a worker"
        async with running_worker(client, stack, task_queue=queue) as again:
            await line.runtime.drain()
            rows = await dialog(again, agent)
    assert [r.text.splitlines()[-1] for r in rows if r.role == "person"] == ["first", "second"]
    assert len({r.conversation_id for r in rows}) == 1
    assert [r.text for r in rows if r.text.startswith("Spoken")] == [
        "Spoken: first",
        "Spoken: second",
    ]


async def test_a_restarted_web_process_picks_the_call_up_from_its_workflow(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack) as worker:
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        agent = (await worker.create_agent()).handle
        await known_person(worker.db, agent, "+15550001", "Grace")
        call = unique("call")
        async with serving_calls(settings, client, fast_rules=FAST) as line:
            assert await say(line, turn(agent, call, "before")) == (200, "Spoken: before")
            await line.runtime.drain()
        token = (line.record, line.token)  # the transport keeps its key
        async with serving_calls(settings, client, fast_rules=FAST, token=token) as again:
            said = await say(again, turn(agent, call, "before", "Spoken: before", "after"))
            assert said == (200, "Spoken: after")
            await again.runtime.drain()
            # Rebuilt from the call's workflow: the direction cue is not sent twice.
            session = again.runtime.sessions.get(call)
            assert session is not None and session.conversation_id is not None
        rows = await dialog(worker, agent)
    person = [r.text for r in rows if r.role == "person"]
    assert len(person) == 2 and "picked up" in person[0] and person[1] == "after"
    assert len({r.conversation_id for r in rows}) == 1


async def test_a_spent_token_budget_is_said_and_nothing_runs(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack) as worker:
        pacing = {"paced_services": ["agent", "web"], "budget_tokens": 1}
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue, pacing=pacing)
        async with serving_calls(settings, client, fast_rules=FAST) as line:
            agent = (await worker.create_agent()).handle
            await known_person(worker.db, agent, "+15550001", "Grace")
            call = unique("call")
            assert await say(line, turn(agent, call, "one")) == (200, "Spoken: one")
            await line.runtime.drain()
            key = f"web:{line.record.tenant}:call-{call}"

            async def spent() -> bool:
                async with worker.db.session() as session:
                    rows = list(await session.exec(select(UsageRow).where(UsageRow.channel == key)))
                # The fast model's call is metered to the agent and the call, as the runs' are.
                voiced = any(r.stage == "voice" and r.agent == agent for r in rows)
                return voiced and any(r.stage == "respond" for r in rows)

            await until(spent, timeout=30)  # the ledger is written off the reply's path
            status, words = await say(line, turn(agent, call, "one", "Spoken: one", "two"))
            await line.runtime.drain()
        assert status == 200 and words.startswith("token budget exhausted"), words
        rows = await dialog(worker, agent)
        assert [r.text for r in rows if r.role == "person"][-1].endswith("one")
