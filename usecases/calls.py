"""Live calls from an operator's side: which are on, and ending one by hand.

A call holds its agent's lock until it ends (docs/channels.md, "Live voice"): while it lasts,
every other channel's message waits. The transport ends a call when the line drops, and the
call's workflow ends it after its idle time; :func:`end_call` is the operator's way to end one
sooner (a caller who will not hang up, a transport that never said the call ended). It sends
the call's workflow ``hang_up``, as the transport does, so the call tells its agent, which
takes the next event at once.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import datetime

from temporalio.client import WorkflowFailureError

from contract import names
from schemas.ids import check_handle
from schemas.settings import Settings
from schemas.voice import CALL_ID_PATTERN, CallState, HangUp
from temporal.client import connect
from usecases.errors import UseCaseError
from usecases.voice import call_state

END_WAIT_S = 30.0
"""How long :func:`end_call` waits for the call's workflow to say it ended."""

OPERATOR = "operator"
"""Who ends a call when the door names nobody."""

_CALL_ID = re.compile(CALL_ID_PATTERN)


class UnknownCallError(UseCaseError):
    """No call with this ID is on."""

    def __init__(self, call_id: str) -> None:
        super().__init__(f"no call {call_id} is on: `persyn calls list` shows the calls that are")


class BadCallIdError(UseCaseError):
    """A call ID no transport gives."""

    def __init__(self, call_id: str) -> None:
        # The refused text, escaped to one printable line and cut short: it may be anything.
        quoted = ascii(call_id)
        shown = quoted if len(quoted) <= 60 else quoted[:57] + "..."
        super().__init__(
            f"call ID {shown}: 1-128 letters, digits or _ . : @ + ~ - (the transport's ID)"
        )


@dataclass(frozen=True)
class OnCall:
    """A call that is on: its state and when it began."""

    state: CallState
    since: datetime | None


async def calls_on(settings: Settings, agent: str | None = None) -> list[OnCall]:
    """Every call that is on (``agent``'s only, if named), oldest first.

    Raises:
        InvalidIdError: ``agent`` is not a handle.
        CallNotAnsweringError: No worker serves a call's workflow.
    """
    if agent is not None:
        check_handle(agent)
    client = await connect(settings)
    query = f"WorkflowType = '{names.CALL_WORKFLOW}' AND ExecutionStatus = 'Running'"
    runs = [run async for run in client.list_workflows(query)]
    states = await asyncio.gather(
        *(call_state(client=client, call_id=_call_id(run.id)) for run in runs)
    )
    found = [
        OnCall(state=state, since=run.start_time)
        for run, state in zip(runs, states, strict=True)
        if state is not None
        and state.ended is None
        and (agent is None or state.call.agent == agent)
    ]
    return sorted(found, key=lambda call: (call.since is None, call.since))


async def end_call(settings: Settings, call_id: str, by: str = OPERATOR) -> CallState:
    """End the call ``call_id`` as ``by``; its final state, once its workflow has ended.

    Raises:
        BadCallIdError: ``call_id`` is not a call ID.
        UnknownCallError: No such call is on.
        CallNotAnsweringError: No worker serves the call's workflow.
    """
    if not _CALL_ID.fullmatch(call_id):
        raise BadCallIdError(call_id)
    client = await connect(settings)
    handle = client.get_workflow_handle(names.call_workflow_id(call_id), result_type=CallState)
    state = await call_state(client=client, call_id=call_id)
    if state is None or state.ended is not None:
        raise UnknownCallError(call_id)
    await handle.signal(names.HANG_UP, HangUp(reason=f"ended by {by}"[:200]))
    try:
        return await asyncio.wait_for(handle.result(), END_WAIT_S)
    except (TimeoutError, WorkflowFailureError):
        # Ended as asked; its worker is slow or gone, and the call says so once it runs.
        return state.model_copy(update={"ended": f"ended by {by}"[:200]})


def _call_id(workflow_id: str) -> str:
    """The call ID a call's workflow ID names (``call/{id}``)."""
    return workflow_id.removeprefix(names.call_workflow_id(""))
