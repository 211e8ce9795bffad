"""Apply a reconciliation verdict to the store, and read a verdict from a model's reply.

A verdict is trusted only as far as it can be checked: an UPDATE or DELETE must name one of
the candidates the call was shown (the subject's own similar facts), and a reply that does not
parse is reported as ``None`` for the caller to retry once and then drop, never guessed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import ValidationError
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.memory.formation.calls import read_reply
from activities.observations.prompts import VerdictReply, label
from schemas.observations import Observation, ObservationProposal, Reconciliation
from store.queries.observations import (
    ObservationConflictError,
    record_observation,
    retract_observation,
)

log = logging.getLogger(__name__)


def read_verdict(reply: str, candidates: Sequence[Observation]) -> Reconciliation | None:
    """The verdict in a schema-constrained reply, or ``None`` when it does not parse.

    The candidate label it names (``F1``...) becomes that candidate's ID; a label that names
    no candidate leaves the target empty, and applying it drops it.
    """
    try:
        read = read_reply(reply, VerdictReply)
    except ValidationError as error:
        log.warning("reconciliation reply did not parse: %s", str(error).splitlines()[0])
        return None
    labels = {label(n): c.id for n, c in enumerate(candidates)}
    target = labels.get((read.target or "").strip().upper())
    return Reconciliation(action=read.action, target=target, reason=read.reason)


async def apply_verdict(
    session: AsyncSession,
    *,
    agent: str,
    proposal: ObservationProposal,
    verdict: Reconciliation,
    candidates: Sequence[Observation],
    embedding: Sequence[float] | None,
    observation_id: str | None = None,
) -> str | None:
    """Carry out one verdict; returns the ID of the observation written, if any.

    ADD stores the proposal; UPDATE stores it superseding the target; DELETE retires the
    target with nothing after it; NOOP changes nothing. A target outside ``candidates``, or
    one already superseded by a concurrent run, is dropped with a log line.
    """
    if verdict.action == "NOOP":
        return None
    if verdict.action == "ADD":
        return await record_observation(
            session,
            agent=agent,
            proposal=proposal,
            embedding=embedding,
            reason=verdict.reason,
            observation_id=observation_id,
        )
    shown = {c.id for c in candidates}
    if verdict.target is None or verdict.target not in shown:
        log.warning(
            "reconciliation %s names %s, not one of the %d candidates shown; dropped",
            verdict.action,
            verdict.target,
            len(shown),
        )
        return None
    try:
        if verdict.action == "DELETE":
            await retract_observation(
                session, agent=agent, observation_id=verdict.target, reason=verdict.reason
            )
            return None
        return await record_observation(
            session,
            agent=agent,
            proposal=proposal,
            embedding=embedding,
            supersedes=verdict.target,
            reason=verdict.reason,
            observation_id=observation_id,
        )
    except ObservationConflictError as error:
        await session.rollback()
        log.warning("reconciliation %s dropped: %s", verdict.action, error)
        return None
