"""Step: counter-perspective critique and refinement, inline or deferred (spec §4 steps 4-5).

A plan (local activity) gives the mode on this channel and whether the candidate is
substantive; one lens is drawn at random with the workflow's seeded generator, so a replay
draws the same one. Inline: the critics run now, concurrently, and the refined draft replaces
the candidate before the decide step. Deferred (the default): the candidate goes out as is,
and once the agent's lock is released the activation deliberates on it itself
(:func:`deferred`; on the conversation's older path it starts ``DeliberationWorkflow`` instead,
:func:`start_deferred`); the conclusion is parked for the agent's next turn on the channel.
:func:`after_transmit` records the decision to speak, consumes the parked conclusions the
transmitted turn was given, and says what deferred deliberation is owed. What this step learns
goes back to ``ActivationWorkflow`` in its result (``TurnState``), and the workflow hands it
on: no state is kept in this module.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

from contract import names
from contract.names import deliberation_workflow_id
from contract.policies import BACKGROUND, MESSAGE_PATH_DATABASE, summarized_local
from schemas.activation import ActivationInput, Draft, PromptRef
from schemas.agents import DeliberationMode
from schemas.deliberation import (
    DeliberationInput,
    DeliberationPlan,
    DeliberationPlanInput,
    DeliberationResult,
    Lens,
    SettleInput,
)
from schemas.streaming import StreamTarget
from schemas.turn import DeliberatedTurn, TurnState
from workflows.deliberation import (
    DELIBERATION_DEADLINE,
    DeliberationWorkflow,
    critique_and_refine,
    deliberate_and_park,
)
from workflows.pipeline import shape

with workflow.unsafe.imports_passed_through():
    from activities.deliberation.parking import DeliberationActivities


def draw(lenses: list[Lens]) -> Lens | None:
    """One lens at random from the workflow's seeded generator: the same on every replay."""
    return workflow.random().choice(lenses) if lenses else None


async def deliberate(
    data: ActivationInput, prompt: PromptRef, draft: Draft, plan: DeliberationPlan | None = None
) -> DeliberatedTurn:
    """The draft to decide on, and what this step learned.

    The draft is the refined one when deliberation runs inline, else the candidate; the turn
    state holds the plan, the lenses and what the inline critics concluded. A ``plan`` the
    review step made is used as is; without one, this step asks for it.
    """
    turn = TurnState()
    if plan is None:
        try:
            plan = await workflow.execute_local_activity_method(
                DeliberationActivities.plan,
                DeliberationPlanInput(
                    agent=data.agent,
                    channel=data.channel,
                    candidate=draft.text,
                    draft_id=draft.draft_id,
                    degraded=draft.degraded,
                    agent_mode=data.deliberation,
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


DEFERRED_IN_RUN_PATCH = "deferred-deliberation-in-run"
"""An activation the agent started deliberates on its transmitted reply itself, after its
release; runs recorded before started a ``DeliberationWorkflow`` for it."""


async def after_transmit(
    data: ActivationInput, prompt: PromptRef, draft: Draft, turn: TurnState, *, transmitted: bool
) -> DeliberationInput | None:
    """Record the decision and consume woven conclusions; the deferred deliberation owed, if any.

    ``turn`` is what the deliberate and decide steps learned, as the workflow holds it.
    """
    plan = turn.plan
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
    owed = plan is not None and plan.mode is DeliberationMode.DEFERRED and plan.substantive
    if not transmitted or plan is None or not owed:
        return None
    return DeliberationInput(
        activation_id=data.activation_id,
        agent=data.agent,
        channel=data.channel,
        conversation_id=data.conversation_id,
        event_id=data.event.event_id,
        prompt_id=prompt.prompt_id,
        candidate=draft.text,
        draft_id=draft.draft_id,
        lens=turn.lens,
        provenance=plan.provenance,
        stream=_revise_stream(data),
    )


def in_run(data: ActivationInput) -> bool:
    """Whether this run deliberates on its reply itself once released (the agent started it).

    An activation of the conversation's path returns to a conversation that waits for it, so
    its deliberation runs as a workflow of its own instead.
    """
    return data.admitted and shape.patched(data, DEFERRED_IN_RUN_PATCH)


async def deferred(owed: DeliberationInput) -> DeliberationResult:
    """Deliberate on the transmitted reply in this run (released: nobody waits for it).

    Its model calls go at background priority, as the calls of a ``DeliberationWorkflow`` did.
    """
    return await deliberate_and_park(owed, priority=BACKGROUND)


async def start_deferred(data: ActivationInput, owed: DeliberationInput) -> None:
    """Start ``DeliberationWorkflow`` on the transmitted reply; it outlives this activation."""
    workflow_id = deliberation_workflow_id(data.activation_id)
    try:
        await workflow.start_child_workflow(
            DeliberationWorkflow.run,
            owed,
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
