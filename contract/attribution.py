"""Implicit attribution: who a model call serves, carried from workflows to activities in headers.

Call sites never pass attribution by hand (Appendix C). A workflow binds what it knows once
(:func:`bind`: the agent, then the conversation when resolved, then the activation); this
interceptor copies the bound value into the header of every activity, local activity, child
workflow and continue-as-new the workflow starts, so background work inherits the attribution
of the exchange that spawned it. On the activity side the header becomes a context variable
that the model gateway reads (:func:`current`).

The module must be passed through the workflow sandbox (see ``workers.runner``) so workflow
code and the interceptor share one registry.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import temporalio.client
from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.worker import (
    ActivityInboundInterceptor,
    ContinueAsNewInput,
    ExecuteActivityInput,
    ExecuteWorkflowInput,
    Interceptor,
    StartActivityInput,
    StartChildWorkflowInput,
    StartLocalActivityInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)

from schemas.models import Attribution

HEADER = "persyn-attribution"
_MAX_RUNS = 20_000

_activity_attribution: ContextVar[Attribution | None] = ContextVar(
    "persyn_attribution", default=None
)
# run ID -> attribution bound by that workflow run; bounded so evicted runs cannot leak.
_runs: OrderedDict[str, Attribution] = OrderedDict()


def current() -> Attribution:
    """The attribution of the running activity (empty outside one)."""
    return _activity_attribution.get() or Attribution()


def use(attribution: Attribution | None) -> Any:
    """Bind ``attribution`` for code outside an activity (tests, benchmarks, CLI tools).

    Returns:
        A token for :func:`reset`.
    """
    return _activity_attribution.set(attribution)


def reset(token: Any) -> None:
    """Undo a :func:`use`."""
    _activity_attribution.reset(token)


def bind(**fields: str | None) -> Attribution:
    """Bind attribution fields for the current workflow run (workflow code only).

    Fields given as ``None`` keep their current value.

    Returns:
        The run's attribution after the update.
    """
    run_id = workflow.info().run_id
    updated = _runs.get(run_id, Attribution()).model_copy(
        update={key: value for key, value in fields.items() if value is not None}
    )
    _remember(run_id, updated)
    return updated


def bound() -> Attribution:
    """The current workflow run's attribution (workflow code only)."""
    return _runs.get(workflow.info().run_id, Attribution())


def _remember(run_id: str, attribution: Attribution) -> None:
    _runs[run_id] = attribution
    _runs.move_to_end(run_id)
    while len(_runs) > _MAX_RUNS:
        _runs.popitem(last=False)


def _encode(attribution: Attribution) -> Payload:
    data = json.dumps(attribution.model_dump(exclude_none=True), separators=(",", ":"))
    return Payload(metadata={"encoding": b"json/plain"}, data=data.encode())


def _decode(payload: Payload | None) -> Attribution | None:
    if payload is None:
        return None
    try:
        return Attribution.model_validate_json(payload.data)
    except ValueError:
        return None


def _with_header(headers: Mapping[str, Payload]) -> Mapping[str, Payload]:
    attribution = _runs.get(workflow.info().run_id)
    if attribution is None:
        return headers
    return {**headers, HEADER: _encode(attribution)}


class _WorkflowOutbound(WorkflowOutboundInterceptor):
    def start_activity(self, input: StartActivityInput) -> workflow.ActivityHandle[Any]:
        input.headers = _with_header(input.headers)
        return super().start_activity(input)

    def start_local_activity(self, input: StartLocalActivityInput) -> workflow.ActivityHandle[Any]:
        input.headers = _with_header(input.headers)
        return super().start_local_activity(input)

    async def start_child_workflow(
        self, input: StartChildWorkflowInput
    ) -> workflow.ChildWorkflowHandle[Any, Any]:
        input.headers = _with_header(input.headers)
        return await super().start_child_workflow(input)

    def continue_as_new(self, input: ContinueAsNewInput) -> Any:
        input.headers = _with_header(input.headers)
        return super().continue_as_new(input)


class _WorkflowInbound(WorkflowInboundInterceptor):
    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        super().init(_WorkflowOutbound(outbound))

    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        run_id = workflow.info().run_id
        inherited = _decode(input.headers.get(HEADER))
        if inherited is not None:
            _remember(run_id, inherited)
        try:
            return await super().execute_workflow(input)
        finally:
            _runs.pop(run_id, None)


class _ActivityInbound(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        token = _activity_attribution.set(_decode(input.headers.get(HEADER)))
        try:
            return await super().execute_activity(input)
        finally:
            _activity_attribution.reset(token)


class AttributionInterceptor(temporalio.client.Interceptor, Interceptor):
    """Carries :class:`~schemas.models.Attribution` from workflows to activities.

    Given to the client, it reaches every worker built from that client.
    """

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        """Bind the header's attribution around each activity execution."""
        return _ActivityInbound(super().intercept_activity(next))

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        """Propagate the run's attribution into everything it starts."""
        return _WorkflowInbound
