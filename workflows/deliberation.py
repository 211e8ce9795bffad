"""``DeliberationWorkflow``: deferred critique and refinement of a reply already transmitted.

Lifecycle: started by an ``ActivationWorkflow`` of the conversation's path (runs recorded
before admission) after its reply went out, as
``deliberation/{activation ulid}`` (one per activation, so never reused), a child with
``ParentClosePolicy.ABANDON``: it outlives the activation and the conversation. It runs the
provenance critic and the lens the activation drew, concurrently; refines when they objected;
parks the conclusion in PostgreSQL for the agent's next turn on the channel; and ends. It takes
no messages and never continues as new.

:func:`critique_and_refine` is the same routine inline mode runs inside the activation, and
:func:`deliberate_and_park` what an activation the agent started runs after its release.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import Priority
from temporalio.exceptions import ActivityError

from contract import attribution, names
from contract.policies import CRITIC_CALL, DATABASE, summarized, summarized_local
from schemas.deliberation import (
    Critique,
    CritiqueInput,
    CritiqueStatus,
    Deliberated,
    DeliberationInput,
    DeliberationResult,
    Lens,
    ParkInput,
    RefineInput,
)
from schemas.ids import ulid_from_parts
from schemas.streaming import StreamTarget

with workflow.unsafe.imports_passed_through():
    from activities.deliberation.critique import CritiqueActivities
    from activities.deliberation.parking import DeliberationActivities
    from activities.deliberation.refine import RefineActivities

DELIBERATION_DEADLINE = timedelta(hours=6)
"""Longest a deferred deliberation may take, worker outages included; its conclusion is stale
by then."""


async def _critique(
    prompt_id: str, candidate: str, draft_id: str | None, lens: Lens, priority: Priority | None
) -> Critique:
    try:
        critique: Critique = await workflow.execute_activity_method(
            CritiqueActivities.critique,
            CritiqueInput(prompt_id=prompt_id, candidate=candidate, draft_id=draft_id, lens=lens),
            # The lens is in the ID so a replay that drew another lens fails loudly.
            **summarized(
                CRITIC_CALL,
                f"{lens.value} critique",
                activity_id=f"critique-{lens.value}",
                priority=priority,
            ),
        )
    except ActivityError as err:
        workflow.logger.warning("%s critique failed: %s", lens.value, err.cause or err)
        return Critique(lens=lens, status=CritiqueStatus.FAILED, note="the critic call failed")
    return critique


async def critique_and_refine(
    *,
    prompt_id: str,
    candidate: str,
    lens: Lens | None,
    provenance: bool,
    stream: StreamTarget | None,
    draft_id: str | None = None,
    priority: Priority | None = None,
) -> Deliberated:
    """Critique ``candidate`` (provenance gate plus ``lens``, concurrently), then refine it.

    With ``draft_id`` the candidate stays in PostgreSQL (``candidate`` is empty) and each
    activity loads it; only a refinement's new text comes back through history.

    Never raises for a model's failure: a critic that fails contributes nothing, and a refiner
    that fails leaves the candidate as it was. ``priority`` dispatches the calls at a priority
    other than the workflow's (a released activation's background work).
    """
    lenses = [*([Lens.PROVENANCE] if provenance else []), *([lens] if lens else [])]
    if not lenses:
        return Deliberated(text=candidate)
    critiques = await asyncio.gather(
        *(_critique(prompt_id, candidate, draft_id, lens, priority) for lens in lenses)
    )
    objections = [objection for critique in critiques for objection in critique.objections]
    failed = [c.lens for c in critiques if c.status is CritiqueStatus.FAILED]
    concluded = Deliberated(text=candidate, lenses=lenses, objections=objections, failed=failed)
    if not objections:
        return concluded
    try:
        refinement = await workflow.execute_activity_method(
            RefineActivities.refine,
            RefineInput(
                prompt_id=prompt_id,
                candidate=candidate,
                draft_id=draft_id,
                objections=objections,
                stream=stream,
            ),
            **summarized(
                CRITIC_CALL,
                f"refine against {len(objections)} objection(s)",
                activity_id="refine",
                priority=priority,
            ),
        )
    except ActivityError as err:
        workflow.logger.warning("refinement failed; keeping the candidate: %s", err.cause or err)
        return concluded
    return concluded.model_copy(update={"text": refinement.text, "refined": refinement.changed})


async def deliberate_and_park(
    data: DeliberationInput, *, priority: Priority | None = None
) -> DeliberationResult:
    """Deliberate on a transmitted reply; park what it concluded, if anything.

    The body of ``DeliberationWorkflow``, and what an activation the agent started runs itself
    once its reply is out and its lock released (``workflows.pipeline.deliberate``), with its
    model calls at ``priority``.
    """
    lens = data.lens.value if data.lens else "no lens"
    workflow.set_current_details(f"Reconsidering a reply on {data.channel.key} ({lens})")
    deliberated = await critique_and_refine(
        prompt_id=data.prompt_id,
        candidate=data.candidate,
        lens=data.lens,
        provenance=data.provenance,
        stream=data.stream,
        draft_id=data.draft_id,
        priority=priority,
    )
    if not deliberated.objections:
        return DeliberationResult(deliberated=deliberated)
    parked_id = ulid_from_parts(workflow.now(), workflow.random().getrandbits(80))
    try:
        await workflow.execute_local_activity_method(
            DeliberationActivities.park,
            ParkInput(
                parked_id=parked_id,
                agent=data.agent,
                channel_key=data.channel.key,
                activation_id=data.activation_id,
                conversation_id=data.conversation_id,
                candidate=data.candidate,
                draft_id=data.draft_id,
                objections=deliberated.objections,
                refined=deliberated.text if deliberated.refined else None,
                at=workflow.now(),
            ),
            **summarized_local(DATABASE, "park the conclusion for the next turn"),
        )
    except ActivityError as err:
        workflow.logger.warning("could not park the conclusion: %s", err.cause or err)
        return DeliberationResult(deliberated=deliberated)
    return DeliberationResult(deliberated=deliberated, parked_id=parked_id)


@workflow.defn(name=names.DELIBERATION_WORKFLOW)
class DeliberationWorkflow:
    """Critique, refine and park the conclusion of one transmitted reply."""

    @workflow.run
    async def run(self, data: DeliberationInput) -> DeliberationResult:
        """Deliberate on ``data.candidate``; park what it concluded, if anything."""
        # Inherited from the activation already; bound again so a manual start attributes too.
        attribution.bind(
            agent=data.agent,
            channel=data.channel.key,
            conversation=data.conversation_id,
            activation=data.activation_id,
        )
        return await deliberate_and_park(data)
