"""The workflow runner's modes: what the shared sandbox saves, keeps and gives up.

The worker passes ``workflows/`` through the sandbox (imported once per process); tests and the
replayer run the strict sandbox, which re-imports workflow modules for every run.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from temporalio import workflow
from temporalio.api.common.v1 import Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.api.failure.v1 import Failure
from temporalio.client import Client, WorkflowHandle
from temporalio.converter import DataConverter, WorkflowSerializationContext
from temporalio.worker import Worker, WorkflowInstance, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.worker.workflow_sandbox._runner import _fake_info, _Instance

from activities.gateway.providers.scripted import Script, ScriptedProvider
from schemas.models import ProviderName
from temporal.client import connect
from tests.harness import Harness, Stack, close_dependencies, dependencies, unique, until
from tests.workers import sandbox_probes
from tests.workers.sandbox_probes import OpensAFile, ReadsTheClock
from workers.build import build_worker
from workers.replay import replayer
from workers.runner import (
    PASSTHROUGH,
    WORKFLOW_CODE,
    DirectContextSandboxRunner,
    workflow_runner,
)


def _passthrough(runner: object) -> set[str]:
    assert isinstance(runner, SandboxedWorkflowRunner)
    return set(runner.restrictions.passthrough_modules)


def test_the_worker_shares_workflow_code_and_tests_and_the_replayer_do_not() -> None:
    assert WORKFLOW_CODE in _passthrough(workflow_runner(share_workflow_code=True))
    assert WORKFLOW_CODE not in _passthrough(workflow_runner())
    assert set(PASSTHROUGH) <= _passthrough(workflow_runner())


def _instance(runner: object) -> WorkflowInstance:
    """A sandboxed instance of a probe workflow, as a worker would create one."""
    assert isinstance(runner, SandboxedWorkflowRunner)
    return runner.create_instance(
        WorkflowInstanceDetails(
            payload_converter_factory=DataConverter.default._new_payload_converter,
            failure_converter_class=DataConverter.default.failure_converter_class,
            interceptor_classes=[],
            defn=workflow._Definition.must_from_class(OpensAFile),
            info=_fake_info,
            randomness_seed=1,
            extern_functions={},
            disable_eager_activity_execution=False,
            worker_level_failure_exception_types=[],
            patch_activation_callback=None,
            last_completion_result=Payloads(),
            last_failure=Failure(),
        )
    )


@pytest.mark.parametrize("shared", [False, True])
async def test_payload_contexts_are_read_without_entering_the_sandbox(
    shared: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = _instance(workflow_runner(share_workflow_code=shared))
    expected = WorkflowSerializationContext(
        namespace=_fake_info.namespace, workflow_id=_fake_info.workflow_id
    )
    # The SDK's way enters the sandbox (``_run_code``) for every lookup; Persyn's never does.
    assert isinstance(instance, _Instance)
    assert _Instance.get_serialization_context(instance, None) == expected

    def entered(*_: object, **__: object) -> None:
        raise AssertionError("the lookup entered the sandbox")

    monkeypatch.setattr(instance, "_run_code", entered)
    assert instance.get_serialization_context(None) == expected
    assert instance.get_external_store_context(None) == _Instance.get_external_store_context(
        _sdk_instance(), None
    )


def _sdk_instance() -> _Instance:
    """The same probe under the SDK's own sandbox runner."""
    instance = _instance(SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default))
    assert isinstance(instance, _Instance)
    return instance


async def test_the_replayer_runs_the_strict_sandbox(stack: Stack) -> None:
    client = await connect(stack.settings(), lazy=True)
    assert WORKFLOW_CODE not in _passthrough(replayer(client).config()["workflow_runner"])


async def test_a_worker_sharing_workflow_code_runs_the_pipeline(
    client: Client, stack: Stack
) -> None:
    provider = ScriptedProvider(Script(rules=[]))
    deps = dependencies(
        stack.settings(), providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn
    )
    queue = unique("shared")
    worker = build_worker(client, deps, task_queue=queue, share_workflow_code=True)
    assert WORKFLOW_CODE in _passthrough(worker.config()["workflow_runner"])
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
            agent = await harness.create_agent()
            first = await harness.say(agent.handle, "first")
            second = await harness.say(agent.handle, "second")
    finally:
        await close_dependencies(deps)
    assert first.marker is not None and second.marker is not None
    assert (first.marker.text, second.marker.text) == ("first", "second")
    assert first.marker.conversation_id == second.marker.conversation_id


async def _task_failure(handle: WorkflowHandle[object, object]) -> str:
    """The first workflow-task failure's message, or '' while there is none."""
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
            return event.workflow_task_failed_event_attributes.failure.message or "failed"
    return ""


async def _run(client: Client, workflow: type, *, shared: bool) -> tuple[str, str]:
    """Run ``workflow`` under a sandbox; returns (its result, the task failure), one empty."""
    passthrough = (*PASSTHROUGH, sandbox_probes.__name__) if shared else PASSTHROUGH
    queue = unique("probe")
    runner = DirectContextSandboxRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*passthrough)
    )
    async with Worker(client, task_queue=queue, workflows=[workflow], workflow_runner=runner):
        handle = await client.start_workflow(
            workflow.run,  # type: ignore[attr-defined]
            id=unique("probe"),
            task_queue=queue,
            execution_timeout=timedelta(seconds=60),
        )
        failure = ""

        async def settled() -> bool:
            nonlocal failure
            failure = await _task_failure(handle)
            described = await handle.describe()
            return bool(failure) or described.close_time is not None

        await until(settled)
        if failure:
            await handle.terminate("probe done")
            return "", failure
        return str(await handle.result()), ""


async def test_shared_code_still_cannot_open_files(client: Client) -> None:
    for shared in (False, True):
        result, failure = await _run(client, OpensAFile, shared=shared)
        assert result == "" and "open" in failure, (shared, failure)


async def test_shared_code_reads_the_clock_unseen_which_the_strict_sandbox_catches(
    client: Client,
) -> None:
    result, failure = await _run(client, ReadsTheClock, shared=False)
    assert result == "" and "now" in failure
    result, failure = await _run(client, ReadsTheClock, shared=True)
    assert failure == "" and result[:4].isdigit()
