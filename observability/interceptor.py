"""Temporal's ``TracingInterceptor``, shaped so that each activation is exactly one trace.

The stock interceptor parents a workflow's spans on whatever span started it. An agent's inbox
workflow lives for months, so every turn would hang off one endless trace. Here instead:

- an ``activation/{ulid}`` workflow parents its spans on the activation's turn span (IDs fixed
  by the ULID, see :mod:`observability.tracing`), and emits that root span itself when it ends,
  with the triggering input and the outcome (text only under the ``full`` content policy);
- any other workflow that inherited an activation in its attribution header (consolidation,
  deliberation: background work of a turn) joins that activation's trace;
- every other workflow (agent inbox, conversation) and the activities it starts open no spans;
- client calls open no spans: a submission is not the unit of work, its activation is.

Workflow spans are instant (the stock interceptor's replay-safe design); the turn span and the
activity, model and tool spans carry real timings.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import temporalio.client
from opentelemetry.trace import Status, StatusCode
from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.contrib.opentelemetry import TracingInterceptor, TracingWorkflowInboundInterceptor
from temporalio.exceptions import FailureError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    ExecuteWorkflowInput,
    WorkflowInterceptorClassInput,
)

from contract import attribution
from observability.tracing import Tracing, activation_of, root_span_id, trace_hex
from schemas.activation import ActivationInput, ActivationResult
from schemas.models import Attribution

log = logging.getLogger(__name__)

_TURN_EXTERN = "__persyn_turn_span"


@dataclass(frozen=True)
class TurnEnd:
    """What a finished activation hands out of the sandbox to become its root span."""

    activation_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, str | bool]
    content: dict[str, str]
    error_type: str | None = None
    error_message: str | None = None


def _root_carrier(activation_id: str) -> dict[str, str]:
    return {"traceparent": f"00-{trace_hex(activation_id)}-{root_span_id(activation_id):016x}-01"}


def _inherited_activation(headers: Mapping[str, Payload]) -> str | None:
    payload = headers.get(attribution.HEADER)
    if payload is None:
        return None
    try:
        return Attribution.model_validate_json(payload.data).activation
    except ValueError:
        return None


def _turn_end(activation_id: str, data: Any, result: Any, error: BaseException | None) -> TurnEnd:
    attributes: dict[str, str | bool] = {"persyn.activation": activation_id}
    content: dict[str, str] = {}
    trigger = "unknown"
    if isinstance(data, ActivationInput):
        trigger = data.event.trigger.value
        attributes |= {
            "persyn.agent": data.agent,
            "persyn.channel": data.channel.key,
            "persyn.channel_kind": data.channel.service,
            "persyn.conversation": data.conversation_id,
            "persyn.person": data.person_id,
            "persyn.event_id": data.event.event_id,
            "persyn.trigger": trigger,
        }
        content["persyn.input.text"] = data.event.text
    if isinstance(result, ActivationResult):
        attributes["persyn.outcome"] = result.marker.outcome.value
        attributes["persyn.degraded"] = result.marker.degraded
        if result.marker.text is not None:
            content["persyn.output.text"] = result.marker.text
        if result.marker.reason is not None:
            content["persyn.outcome.reason"] = result.marker.reason
    else:
        attributes["persyn.outcome"] = "failed"
    started = workflow.info().workflow_start_time
    return TurnEnd(
        activation_id=activation_id,
        name=f"turn:{trigger}",
        start_ns=int(started.timestamp()) * 1_000_000_000 + started.microsecond * 1000,
        end_ns=workflow.time_ns(),
        attributes=attributes,
        content=content,
        error_type=type(error).__name__ if error is not None else None,
        error_message=str(error) if error is not None else None,
    )


class _WorkflowInbound(TracingWorkflowInboundInterceptor):
    """Runs inside the workflow sandbox: only ``workflow.*`` APIs, no I/O."""

    def _load_workflow_context_carrier(self) -> dict[str, Any] | None:
        if self._workflow_context_carrier is None:
            # An empty dict marks "computed: this run opens no spans".
            self._workflow_context_carrier = self._turn_carrier() or {}
        return self._workflow_context_carrier or None

    def _turn_carrier(self) -> dict[str, Any] | None:
        info = workflow.info()
        own = activation_of(info.workflow_id)
        if own is not None:
            return _root_carrier(own)
        inherited = _inherited_activation(info.headers)
        if inherited is None:
            return None
        header = info.headers.get(self.header_key)
        if header is not None:
            # Started from inside the turn: nest under the exact span that started it.
            carrier: dict[str, Any] = self.payload_converter.from_payloads([header])[0]
            if trace_hex(inherited) in str(carrier.get("traceparent", "")):
                return carrier
        return _root_carrier(inherited)

    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        """Run the workflow; an activation also emits its turn span when it ends."""
        activation_id = activation_of(workflow.info().workflow_id)
        if activation_id is None:
            return await super().execute_workflow(input)
        data = input.args[0] if input.args else None
        try:
            result = await super().execute_workflow(input)
        except FailureError as err:
            self._end_turn(activation_id, data, None, err)
            raise
        self._end_turn(activation_id, data, result, None)
        return result

    def _end_turn(
        self, activation_id: str, data: Any, result: Any, error: BaseException | None
    ) -> None:
        if workflow.unsafe.is_replaying():
            return  # emitted when the run first got here
        try:
            workflow.extern_functions()[_TURN_EXTERN](_turn_end(activation_id, data, result, error))
        except Exception as err:  # tracing must never fail a workflow task
            workflow.logger.warning("turn span not emitted: %s", err)


class _ActivityInbound(ActivityInboundInterceptor):
    """Traces an activity only when its workflow put a trace context in the headers."""

    def __init__(
        self, next: ActivityInboundInterceptor, traced: ActivityInboundInterceptor, key: str
    ) -> None:
        super().__init__(next)
        self._traced = traced
        self._key = key

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        """Run the activity, inside a span if it belongs to a trace."""
        if self._key in input.headers:
            return await self._traced.execute_activity(input)
        return await super().execute_activity(input)


class TurnTracingInterceptor(TracingInterceptor):
    """The tracing interceptor of Persyn's clients and workers (added by ``connect()``)."""

    def __init__(self, tracing: Tracing) -> None:
        """Trace with ``tracing``'s provider and content policy."""
        super().__init__(tracing.provider.get_tracer("temporalio.contrib.opentelemetry"))
        self._tracing = tracing

    def intercept_client(
        self, next: temporalio.client.OutboundInterceptor
    ) -> temporalio.client.OutboundInterceptor:
        """Client calls open no spans (see the module docstring)."""
        return next

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        """Span activities that belong to a trace; run the rest untouched."""
        return _ActivityInbound(next, super().intercept_activity(next), self.header_key)

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[TracingWorkflowInboundInterceptor]:
        """The activation-shaped workflow interceptor, with the turn span's exit."""
        super().workflow_interceptor_class(input)
        input.unsafe_extern_functions[_TURN_EXTERN] = self._emit_turn
        return _WorkflowInbound

    # The stock interceptor lets a tracer failure escape into the workflow task or the activity,
    # which would retry a turn for ever over a broken span processor. These two guards keep
    # tracing a pure side effect.

    def _completed_workflow_span(self, params: Any) -> Any:
        try:
            return super()._completed_workflow_span(params)
        except Exception:
            log.warning("workflow span not emitted", exc_info=True)
            return None

    @contextmanager
    def _start_as_current_span(self, name: str, **options: Any) -> Iterator[None]:
        try:
            manager = super()._start_as_current_span(name, **options)
            manager.__enter__()
        except Exception:
            log.warning("span %s not started", name, exc_info=True)
            yield None
            return
        try:
            yield None
        except BaseException as err:
            try:
                manager.__exit__(type(err), err, err.__traceback__)
            except BaseException as raised:
                if raised is not err:
                    log.warning("span %s not ended", name, exc_info=True)
            raise
        try:
            manager.__exit__(None, None, None)
        except Exception:
            log.warning("span %s not ended", name, exc_info=True)

    def _emit_turn(self, end: TurnEnd) -> None:
        # Runs outside the sandbox, on the workflow task: only queues a span, never raises.
        try:
            full = self._tracing.full
            attributes: dict[str, Any] = {**end.attributes, **(end.content if full else {})}
            span = self._tracing.turn_span(
                end.activation_id, end.name, start_ns=end.start_ns, attributes=attributes
            )
            if end.error_type is not None:
                message = f"{end.error_type}: {end.error_message}" if full else end.error_type
                span.set_status(Status(StatusCode.ERROR, message))
            span.end(end_time=end.end_ns)
        except Exception:
            log.warning("turn span of %s not emitted", end.activation_id, exc_info=True)
