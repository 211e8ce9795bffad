"""Attribution binding: who a model call serves, as workflows and activities see it.

Call sites never pass attribution by hand (Appendix C). A workflow binds what it knows once
(:func:`bind`: the agent, then the conversation when resolved, then the activation); the
attribution interceptor (``temporal.attribution_interceptor``) copies the bound value into the
header of everything the run starts and, on the activity side, binds the header to the context
variable that the model gateway reads (:func:`current`).

This module holds the registry both sides share, so it is passed through the workflow sandbox
(``workers.runner``): workflow code and the interceptor must see one registry, not a copy per
run. It does no I/O.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from contextvars import ContextVar
from typing import Any

from temporalio import workflow
from temporalio.api.common.v1 import Payload

from schemas.models import Attribution

HEADER = "persyn-attribution"
"""The header that carries a run's attribution to what it starts."""

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
    """Bind ``attribution`` for code outside a workflow (activities, tests, benchmarks, CLI).

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
    remember(run_id, updated)
    return updated


def bound() -> Attribution:
    """The current workflow run's attribution (workflow code only)."""
    return _runs.get(workflow.info().run_id, Attribution())


def of_run(run_id: str) -> Attribution | None:
    """What run ``run_id`` has bound, if anything (for the interceptor)."""
    return _runs.get(run_id)


def remember(run_id: str, attribution: Attribution) -> None:
    """Bind ``attribution`` to run ``run_id`` (an inherited header, or :func:`bind`)."""
    _runs[run_id] = attribution
    _runs.move_to_end(run_id)
    while len(_runs) > _MAX_RUNS:
        _runs.popitem(last=False)


def forget(run_id: str) -> None:
    """Drop run ``run_id``'s binding when the run ends."""
    _runs.pop(run_id, None)


def encode(attribution: Attribution) -> Payload:
    """The header payload that carries ``attribution``."""
    data = json.dumps(attribution.model_dump(exclude_none=True), separators=(",", ":"))
    return Payload(metadata={"encoding": b"json/plain"}, data=data.encode())


def decode(payload: Payload | None) -> Attribution | None:
    """The attribution a header carries; ``None`` when absent or unreadable."""
    if payload is None:
        return None
    try:
        return Attribution.model_validate_json(payload.data)
    except ValueError:
        return None
