"""A worker killed mid-reconciliation: the fact is reconciled once, and nothing is lost.

The reconciliation's model call takes 3 s on a real worker process; the test kills that
process while the call is in flight, starts another, and checks the end state: the update
applied exactly once, the old fact kept as superseded.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from sqlmodel import select
from temporalio.client import Client

from contract import names
from schemas.ids import new_ulid
from schemas.observations import ObservationProposal, ObserveInput
from store.queries.observations import record_observation
from store.tables.observations import ObservationRow
from tests.harness import Stack, unique, until
from tests.memory.formation.helpers import formation_rules, formation_worker, new_agent, rows
from tests.observations.test_pipeline import EXTRACT, RECONCILE, facts
from tests.workflows.test_faults import WorkerProcess, worker_processes  # noqa: F401
from workflows.observations import ObservationWorkflow


async def test_a_worker_killed_mid_reconciliation_applies_the_fact_once(
    client: Client,
    stack: Stack,
    worker_processes: list[WorkerProcess],  # noqa: F811
    tmp_path: Path,
) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "rules": [
                    {
                        "task": "observe",
                        "system_match": EXTRACT,
                        "reply": facts(("Ada", "home_city", "lives in York")),
                    },
                    {
                        "task": "observe",
                        "system_match": RECONCILE,
                        "delay_ms": 3000,
                        "reply": '{"action": "UPDATE", "target": "F1", "reason": "moved"}',
                    },
                ]
            }
        )
    )
    queue = unique("tq-observe")
    first = WorkerProcess(stack, queue, script, tmp_path / "worker1.log")
    second = WorkerProcess(stack, queue, script, tmp_path / "worker2.log")
    for worker in (first, second):
        worker.env["PERSYN_ENCODER"] = "none"
    worker_processes.extend([first, second])

    # The dialog comes from an in-process worker that learns nothing from it itself.
    no_observing = {"observations": {"enabled": False}, "encoder": "none"}
    async with formation_worker(
        client, stack, rules=formation_rules(), settings_overrides=no_observing
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.1)
        receipt = await harness.say(agent, "I moved to York last week.")
        assert receipt.marker and receipt.marker.conversation_id
        conversation = receipt.marker.conversation_id
        await client.get_workflow_handle(names.conversation_workflow_id(conversation)).result()
        turns = await rows(
            harness.db,
            "SELECT id, person_id FROM dialog_turns WHERE conversation_id = :c ORDER BY seq",
            c=conversation,
        )
        ada = next(t.person_id for t in turns if t.person_id)
        async with harness.db.session() as session:
            leeds = await record_observation(
                session,
                agent=agent,
                proposal=ObservationProposal(
                    person_id=ada,
                    type="home_city",
                    value="lives in Leeds",
                    trust="self",
                    observed_at=datetime.now(UTC),
                ),
                embedding=None,
            )

        first.start()
        observe_id = new_ulid()
        handle = await client.start_workflow(
            ObservationWorkflow.run,
            ObserveInput(
                observe_id=observe_id,
                agent=agent,
                conversation_id=conversation,
                through_turn=turns[-1].id,
            ),
            id=names.observation_workflow_id(observe_id),
            task_queue=queue,
        )

        async def reconciling() -> bool:
            description = await handle.describe()
            return any(
                p.activity_type.name == "observations.reconcile" and p.attempt == 1
                for p in description.raw_description.pending_activities
                if p.last_started_time.seconds
            )

        await until(reconciling, timeout=120)
        first.kill()
        second.start()
        result = await handle.result()

        async with harness.db.session() as session:
            stored = (
                await session.exec(select(ObservationRow).where(ObservationRow.agent == agent))
            ).all()

    assert (result.proposed, result.updated, result.dropped) == (1, 1, 0)
    by_value = {r.value: r for r in stored}
    assert sorted(by_value) == ["lives in Leeds", "lives in York"]
    assert by_value["lives in Leeds"].status == "superseded"
    assert by_value["lives in York"].status == "active"
    assert by_value["lives in York"].supersedes == leeds
