"""An activation owns its turn state: what deliberate and decide learn reaches the record step.

The state lives in the workflow run (``TurnState``), never in a workflow module: a worker
without the determinism sandbox shares module globals across runs, so a module-level dict
would be process state that outlives, or is lost under, the runs it serves.
"""

from __future__ import annotations

import ast
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from activities.gateway.providers.scripted import Script, ScriptedProvider
from schemas.models import ProviderName
from store.queries.deliberation import get_decision
from tests.deliberation.helpers import CLAIM, claim_rules, deferred_conclusion, new_agent, settled
from tests.harness import Harness, Stack, unique
from workers.build import WORKFLOWS, activities, build_dependencies
from workers.runner import workflow_runner

WORKFLOW_CODE = Path(__file__).parent.parent.parent / "workflows"


async def test_notes_reach_the_record_step_when_every_task_replays(
    client: Client, stack: Stack
) -> None:
    """Sandbox off and no cache: every workflow task rebuilds the run from its history."""
    settings = stack.settings(workflow_sandbox=False)
    provider = ScriptedProvider(Script(rules=claim_rules()))
    deps = build_dependencies(settings, providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn)
    queue = unique("evict")
    worker = Worker(
        client,
        task_queue=queue,
        workflows=WORKFLOWS,
        activities=activities(deps, client),
        workflow_runner=workflow_runner(sandboxed=False),
        max_cached_workflows=0,
    )
    try:
        async with worker:
            harness = Harness(
                client=client,
                task_queue=queue,
                deps=deps,
                provider=provider,
                worker=worker,
                db=deps.db,
            )
            handle = await new_agent(deps.db)
            receipt = await harness.say(handle, "what did we agree about the report?")
            assert receipt.marker is not None and receipt.marker.text == CLAIM
            activation_id = await settled(harness, receipt.marker.activation_id)
            # The deferred deliberation (in the released activation) got the lens drawn.
            await deferred_conclusion(harness, activation_id)
    finally:
        await deps.aclose()
    async with deps.db.session() as session:
        decision = await get_decision(session, activation_id=activation_id)
    assert decision is not None
    # The judge's verdict (decide) and the plan and lenses (deliberate) reached after_transmit;
    # without them it records "not recorded" with no mode and no lenses.
    assert decision.reason == "I was asked and have an answer."
    assert decision.basis != "unknown"
    assert decision.mode == "deferred"
    assert "provenance" in decision.lenses and len(decision.lenses) == 2


def _module_level_containers(path: Path) -> list[str]:
    """Names bound at module level to a mutable container (dict, list, set) in ``path``."""
    found: list[str] = []
    for node in ast.parse(path.read_text()).body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        mutable = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            mutable = value.func.id in {"dict", "list", "set", "defaultdict", "OrderedDict"}
        if mutable:
            where = path.relative_to(WORKFLOW_CODE)
            found += [f"{where}:{t.id}" for t in targets if isinstance(t, ast.Name)]
    return found


def test_no_workflow_module_holds_mutable_state() -> None:
    """Unsandboxed workers share module globals between runs: workflow state must not live there.

    Constants are tuples, frozen models or typed options; a module's ``__all__`` is not state.
    """
    found = [
        name
        for path in sorted(WORKFLOW_CODE.rglob("*.py"))
        for name in _module_level_containers(path)
        if not name.split(":")[1].startswith("__")
    ]
    assert found == [], "keep run state in the workflow instance, not in the module"
