"""Internal handlers answer only Persyn's own processes: their messages are signed and checked.

Anyone with access to the namespace can send any workflow any signal or update. Persyn's
workflows have public handlers, which any client may call (``submit``, ``deliver``, the
queries), and internal ones, which only Persyn's own workflows and activities call (``impulse``,
``peer``, ``activation_finished``, ``end_conversation``, ...; ``contract.catalog.HANDLERS``
with ``caller="persyn"``, so this list cannot drift from the published one).

Every message to an internal handler carries the header :data:`HEADER`: an HMAC-SHA256, under
the deployment's internal key (:mod:`temporal.internal_key`), of the handler name, the target
workflow ID and the message's arguments as canonical JSON. The interceptor here adds it wherever
Persyn sends one (a workflow signalling another, a client signalling or updating) and checks it
where a worker receives one. Without a valid signature a signal is dropped with a warning (it
never fails a workflow task) and an update is refused with a non-retryable
:data:`UNAUTHENTICATED` error.

Replay: runs recorded before signatures existed hold internal signals without the header. The
check asks ``workflow.patched`` only when a signature is missing or wrong, so such a history
replays as it ran, and a run recorded since then drops the same forgeries again on replay (the
key must not change while a run it signed for is open). An update's validator checks without
the patch: validators do not run on replay and a refused update leaves no history.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import temporalio.client
from pydantic_core import to_jsonable_python
from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.client import (
    SignalWorkflowInput,
    StartWorkflowInput,
    StartWorkflowUpdateInput,
    StartWorkflowUpdateWithStartInput,
    WorkflowHandle,
    WorkflowUpdateHandle,
)
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    HandleSignalInput,
    HandleUpdateInput,
    Interceptor,
    SignalChildWorkflowInput,
    SignalExternalWorkflowInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)

from contract.catalog import HANDLERS

HEADER = "persyn-internal"
"""The Temporal header that carries an internal message's signature."""

UNAUTHENTICATED = "Unauthenticated"
"""``ApplicationError.type`` of an internal update that is not signed by the deployment."""

PATCH_SIGNED = "internal-messages-signed"
"""Runs recorded before this patch accepted internal signals without a signature."""

INTERNAL: frozenset[tuple[str, str]] = frozenset(
    (spec.workflow, spec.name) for spec in HANDLERS if spec.caller == "persyn"
)
"""(workflow type, handler name) of every internal signal and update."""

INTERNAL_NAMES: frozenset[str] = frozenset(name for _, name in INTERNAL)
"""The names a sender signs (a sender does not always know the target's workflow type)."""

ONLY_PERSYN = "internal handlers only accept messages from Persyn's own processes"


def signature(key: bytes, handler: str, workflow_id: str, args: Sequence[Any]) -> bytes:
    """HMAC-SHA256 of a message to ``handler`` of ``workflow_id`` with ``args``.

    The three are signed as one canonical JSON array (sorted keys, no spaces, ASCII), so no
    choice of workflow ID can make two different messages read the same. Arguments are taken
    as their JSON form: the sender's models and the receiver's decoded payloads agree on it.

    Raises:
        ValueError: ``args`` has no JSON form (the receiver gets such a payload raw).
    """
    try:
        jsonable = to_jsonable_python(list(args))
    except Exception as err:  # pydantic_core's serialization errors share no public base
        raise ValueError(f"no JSON form: {err}") from None
    message = json.dumps(
        [handler, workflow_id, jsonable], sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hmac.new(key, message.encode("ascii"), hashlib.sha256).digest()


def signed(
    key: bytes,
    headers: Mapping[str, Payload],
    handler: str,
    workflow_id: str,
    args: Sequence[Any],
) -> Mapping[str, Payload]:
    """``headers`` with the signature of the message, if ``handler`` is internal."""
    if handler not in INTERNAL_NAMES:
        return headers
    mac = signature(key, handler, workflow_id, args)
    return {**headers, HEADER: Payload(metadata={"encoding": b"binary/plain"}, data=mac)}


def authentic(
    key: bytes,
    headers: Mapping[str, Payload],
    handler: str,
    workflow_id: str,
    args: Sequence[Any],
) -> bool:
    """Whether ``headers`` carry the deployment's signature of exactly this message."""
    carried = headers.get(HEADER)
    if carried is None:
        return False
    try:
        expected = signature(key, handler, workflow_id, args)
    except ValueError:
        return False
    return hmac.compare_digest(carried.data, expected)


# -- worker side ------------------------------------------------------------------------------


class _WorkflowOutbound(WorkflowOutboundInterceptor):
    """Signs the internal signals a workflow sends."""

    def __init__(self, next: WorkflowOutboundInterceptor, key: bytes) -> None:
        super().__init__(next)
        self._key = key

    async def signal_external_workflow(self, input: SignalExternalWorkflowInput) -> None:
        input.headers = signed(
            self._key, input.headers, input.signal, input.workflow_id, input.args
        )
        await super().signal_external_workflow(input)

    async def signal_child_workflow(self, input: SignalChildWorkflowInput) -> None:
        input.headers = signed(
            self._key, input.headers, input.signal, input.child_workflow_id, input.args
        )
        await super().signal_child_workflow(input)


class _WorkflowInbound(WorkflowInboundInterceptor):
    """Checks the signature of every internal signal and update a workflow receives."""

    key: bytes = b""
    """Set on the subclass :class:`InternalAuthInterceptor` builds: its key, as data."""

    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        super().init(_WorkflowOutbound(outbound, self.key))

    def _forged(self, handler: str, args: Sequence[Any], headers: Mapping[str, Payload]) -> bool:
        info = workflow.info()
        if (info.workflow_type, handler) not in INTERNAL:
            return False
        return not authentic(self.key, headers, handler, info.workflow_id, args)

    async def handle_signal(self, input: HandleSignalInput) -> None:
        # patched() only for a forgery: a history recorded before signing replays unchanged.
        if self._forged(input.signal, input.args, input.headers) and workflow.patched(PATCH_SIGNED):
            workflow.logger.warning("dropped an unsigned %s signal: %s", input.signal, ONLY_PERSYN)
            return
        await super().handle_signal(input)

    def handle_update_validator(self, input: HandleUpdateInput) -> None:
        if self._forged(input.update, input.args, input.headers):
            _refuse(input.update)
        super().handle_update_validator(input)

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        # For an internal update without a validator (the SDK calls no validator then).
        if self._forged(input.update, input.args, input.headers) and workflow.patched(PATCH_SIGNED):
            _refuse(input.update)
        return await super().handle_update_handler(input)


def _refuse(update: str) -> NoReturn:
    raise ApplicationError(
        f"unsigned {update} update: {ONLY_PERSYN}; clients send events with submit or deliver",
        type=UNAUTHENTICATED,
        non_retryable=True,
    )


# -- client side ------------------------------------------------------------------------------


class _ClientOutbound(temporalio.client.OutboundInterceptor):
    """Signs the internal signals and updates a Persyn process sends through its client."""

    def __init__(self, next: temporalio.client.OutboundInterceptor, key: bytes) -> None:
        super().__init__(next)
        self._key = key

    async def start_workflow(self, input: StartWorkflowInput) -> WorkflowHandle[Any, Any]:
        if input.start_signal is not None:
            # Signal-with-start: the server gives the request's header to the signal too.
            input.headers = signed(
                self._key, input.headers, input.start_signal, input.id, input.start_signal_args
            )
        return await super().start_workflow(input)

    async def signal_workflow(self, input: SignalWorkflowInput) -> None:
        input.headers = signed(self._key, input.headers, input.signal, input.id, input.args)
        await super().signal_workflow(input)

    async def start_workflow_update(
        self, input: StartWorkflowUpdateInput
    ) -> WorkflowUpdateHandle[Any]:
        input.headers = signed(self._key, input.headers, input.update, input.id, input.args)
        return await super().start_workflow_update(input)

    async def start_update_with_start_workflow(
        self, input: StartWorkflowUpdateWithStartInput
    ) -> WorkflowUpdateHandle[Any]:
        update = input.update_workflow_input
        target = input.start_workflow_input.id
        update.headers = signed(self._key, update.headers, update.update, target, update.args)
        return await super().start_update_with_start_workflow(input)


class InternalAuthInterceptor(temporalio.client.Interceptor, Interceptor):
    """Signs internal messages a Persyn process sends, and checks those its workers receive.

    Given to the client (``temporal.client.connect``), it reaches every worker and replayer
    built from that client. The key is captured here, outside workflow code: the workflow
    interceptor gets it as a class attribute and does no I/O.

    Args:
        key: The deployment's internal key (:func:`temporal.internal_key.internal_key`).
    """

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._inbound: type[WorkflowInboundInterceptor] = type(
            "InternalAuthInbound", (_WorkflowInbound,), {"key": key}
        )

    def intercept_client(
        self, next: temporalio.client.OutboundInterceptor
    ) -> temporalio.client.OutboundInterceptor:
        """Sign what this client sends to internal handlers."""
        return _ClientOutbound(super().intercept_client(next), self._key)

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        """Check internal messages workflows receive; sign those they send."""
        return self._inbound
