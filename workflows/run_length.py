"""How many events a long-lived run (an agent's inbox, a conversation) holds before it continues.

A worker that starts replays the whole history of every open run before it serves it, so the
limit bounds how soon the agents answer after a restart. Every version of the default is a
patch: a run replays with the limit it was recorded under.
"""

from __future__ import annotations

from temporalio import workflow

from schemas.agents import AgentWorkflowInput
from schemas.conversation import ConversationInput
from schemas.runs import LEGACY_HISTORY_LIMIT, PREVIOUS_HISTORY_LIMIT

PATCH_HISTORY_LIMIT = "continue-at-history-limit"
"""Long-lived runs continue as new at their input's ``history_limit`` events; runs recorded
before replay without it."""

PATCH_HISTORY_500 = "history-limit-500"
"""An input that omitted ``history_limit`` took ``PREVIOUS_HISTORY_LIMIT``; runs recorded
before took ``LEGACY_HISTORY_LIMIT``."""

PATCH_HISTORY_250 = "history-limit-250"
"""An input that omits ``history_limit`` takes today's default (``schemas.runs.HISTORY_LIMIT``)."""


def asked(data: AgentWorkflowInput | ConversationInput) -> tuple[str, ...]:
    """The patches :func:`history_limit` asks of a run started today with ``data``.

    An input that names its limit never consults a default's patch, so it is not asked.
    """
    if "history_limit" in data.model_fields_set:
        return (PATCH_HISTORY_LIMIT,)
    return (PATCH_HISTORY_LIMIT, PATCH_HISTORY_250)


def history_limit(data: AgentWorkflowInput | ConversationInput) -> int | None:
    """The run's history limit, or ``None`` for a run recorded before runs had one.

    Every input Persyn writes names its limit, and that is the limit. Only an input that
    omitted it (a client starting the run by hand) falls back to a default, and which default
    depends on when the run was recorded: it went from 1,000 events to 500, then 250.
    """
    if not workflow.patched(PATCH_HISTORY_LIMIT):
        return None
    if "history_limit" in data.model_fields_set or workflow.patched(PATCH_HISTORY_250):
        return data.history_limit
    if workflow.patched(PATCH_HISTORY_500):
        return PREVIOUS_HISTORY_LIMIT
    return LEGACY_HISTORY_LIMIT
