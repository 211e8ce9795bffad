"""Step: counter-perspective critique and refinement, inline or deferred (spec §4 steps 4-5).

A plan (local activity) gives the mode on this channel and whether the candidate is
substantive; one lens is drawn at random with the workflow's seeded generator, so a replay
draws the same one. Inline: the critics run now, concurrently, and the refined draft replaces
the candidate before the decide step. Deferred (the default): the candidate goes out as is, and
:func:`after_transmit` starts ``DeliberationWorkflow``, whose conclusion is parked for the
agent's next turn on the channel. ``after_transmit`` also records the decision to speak and
consumes the parked conclusions the transmitted turn was given. What this step learns goes back
to ``ActivationWorkflow`` in its result (``TurnState``), and the workflow hands it on: no state
is kept in this module.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

from contract import names
from contract.names import deliberation_workflow_id
from contract.policies import BACKGROUND, MESSAGE_PATH_DATABASE, summarized_local
from schemas.activation import ActivationInput, Draft, PromptRef, StreamTarget
from schemas.agents import DeliberationMode
from schemas.deliberation import (
    DeliberationInput,
    DeliberationPlan,
    DeliberationPlanInput,
    Lens,
    SettleInput,
)
from schemas.turn import DeliberatedTurn, TurnState
from workflows.deliberation import DELIBERATION_DEADLINE, DeliberationWorkflow, critique_and_refine

with workflow.unsafe.imports_passed_through():
    from activities.deliberation.parking import DeliberationActivities


def draw(lenses: list[Lens]) -> Lens | None:
    """One lens at random from the workflow's seeded generator: the same on every replay."""
    return workflow.random().choice(lenses) if lenses else None


async def deliberate(data: ActivationInput, prompt: PromptRef, draft: Draft) -> DeliberatedTurn:
    """The draft to decide on, and what this step learned.

    The draft is the refined one when deliberation runs inline, else the candidate; the turn
    state holds the plan, the lenses and what the inline critics concluded.
    """
    turn = TurnState()
    try:
        plan: DeliberationPlan = await workflow.execute_local_activity_method(
            DeliberationActivities.plan,
            DeliberationPlanInput(
                agent=data.agent,
                channel=data.channel,
                candidate=draft.text,
                draft_id=draft.draft_id,
                degraded=draft.degraded,
            ),
            **summarized_local(MESSAGE_PATH_DATABASE, "plan deliberation"),
        )
    except ActivityError as err:
        workflow.logger.warning("no deliberation plan; the reply goes out as is: %s", err)
        return DeliberatedTurn(draft=draft, turn=turn)
    turn.plan = plan
    if plan.mode is DeliberationMode.OFF or not plan.substantive:
        return DeliberatedTurn(draft=draft, turn=turn)
    turn.lens = draw(plan.lenses)
    turn.lenses = [*([Lens.PROVENANCE] if plan.provenance else []), *filter(None, [turn.lens])]
    if plan.mode is not DeliberationMode.INLINE:
        return DeliberatedTurn(draft=draft, turn=turn)
    workflow.set_current_details(f"Reconsidering the reply ({turn.lens or 'provenance only'})")
    concluded = await critique_and_refine(
        prompt_id=prompt.prompt_id,
        candidate=draft.text,
        draft_id=draft.draft_id,
        lens=turn.lens,
        provenance=plan.provenance,
        stream=_revise_stream(data),
    )
    turn.objections, turn.refined = len(concluded.objections), concluded.refined
    if not concluded.refined:
        return DeliberatedTurn(draft=draft, turn=turn)
    # The refinement is a new text: it goes on as text, the stored draft no longer applies.
    refined = draft.model_copy(update={"text": concluded.text, "ref": None})
    return DeliberatedTurn(draft=refined, turn=turn)


def _revise_stream(data: ActivationInput) -> StreamTarget | None:
    # Appendix B: the refinement pass streams as its own phase beside the committed draft.
    return StreamTarget(key=data.event.event_id, phase="revise") if data.event.stream else None


async def after_transmit(
    data: ActivationInput, prompt: PromptRef, draft: Draft, turn: TurnState, *, transmitted: bool
) -> None:
    """Record the decision, consume woven conclusions, start deferred deliberation.

    ``turn`` is what the deliberate and decide steps learned, as the workflow holds it.
    """
    plan = turn.plan
    deferred = (
        transmitted
        and plan is not None
        and plan.mode is DeliberationMode.DEFERRED
        and plan.substantive
    )
    try:
        await workflow.execute_local_activity_method(
            DeliberationActivities.settle,
            SettleInput(
                activation_id=data.activation_id,
                agent=data.agent,
                channel_key=data.channel.key,
                event_id=data.event.event_id,
                prompt_id=prompt.prompt_id,
                transmitted=transmitted,
                verdict=turn.verdict,
                mode=plan.mode if plan is not None else None,
                lenses=turn.lenses,
                objections=turn.objections,
                refined=turn.refined,
                at=workflow.now(),
            ),
            **summarized_local(MESSAGE_PATH_DATABASE, "record the decision"),
        )
    except ActivityError as err:
        # The reply is out and the marker recorded: a bookkeeping failure must not fail the turn.
        workflow.logger.warning("could not record the decision: %s", err.cause or err)
    if deferred and plan is not None:
        await _start_deferred(data, prompt, draft, plan, turn.lens)


async def _start_deferred(
    data: ActivationInput,
    prompt: PromptRef,
    draft: Draft,
    plan: DeliberationPlan,
    lens: Lens | None,
) -> None:
    workflow_id = deliberation_workflow_id(data.activation_id)
    try:
        await workflow.start_child_workflow(
            DeliberationWorkflow.run,
            DeliberationInput(
                activation_id=data.activation_id,
                agent=data.agent,
                channel=data.channel,
                conversation_id=data.conversation_id,
                event_id=data.event.event_id,
                prompt_id=prompt.prompt_id,
                candidate=draft.text,
                draft_id=draft.draft_id,
                lens=lens,
                provenance=plan.provenance,
                stream=_revise_stream(data),
            ),
            id=workflow_id,
            # It must outlive this activation, and the conversation it belongs to.
            parent_close_policy=ParentClosePolicy.ABANDON,
            execution_timeout=DELIBERATION_DEADLINE,
            priority=BACKGROUND,
            search_attributes=names.search_attributes(
                agent=data.agent,
                channel=data.channel.key,
                conversation=data.conversation_id,
                trigger=data.event.trigger.value,
            ),
            static_summary=f"{data.agent} reconsiders a reply on {data.channel.key}",
        )
    except WorkflowAlreadyStartedError:
        workflow.logger.info("%s already runs", workflow_id)
