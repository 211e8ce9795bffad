"""The interceptor that carries attribution from workflows to activities in headers.

It copies a run's bound attribution (:mod:`contract.attribution`) into the header of every
activity, local activity, child workflow and continue-as-new the run starts, so background
work inherits the attribution of the exchange that spawned it; on the activity side it binds
the header to the context variable the model gateway reads.
"""

from __future__ import annotations

from collections.abc import Mapping
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

from contract import attribution
from contract.attribution import HEADER


def _with_header(headers: Mapping[str, Payload]) -> Mapping[str, Payload]:
    bound = attribution.of_run(workflow.info().run_id)
    if bound is None:
        return headers
    return {**headers, HEADER: attribution.encode(bound)}


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
        inherited = attribution.decode(input.headers.get(HEADER))
        if inherited is not None:
            attribution.remember(run_id, inherited)
        try:
            return await super().execute_workflow(input)
        finally:
            attribution.forget(run_id)


class _ActivityInbound(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        token = attribution.use(attribution.decode(input.headers.get(HEADER)))
        try:
            return await super().execute_activity(input)
        finally:
            attribution.reset(token)


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
