"""Step: decide whether to speak (spec §4 step 6). Silence is an outcome with a reason.

Every observed message reaches this step. Screening (rules and guardrail hooks, a local
activity) settles what needs no model; otherwise a fast model judges: an engagement decision
for unaddressed traffic, and for substantive addressed replies whether the agent would rather
decline. If the judgment is unavailable the rule stands: answer people, leave bystanders be.
When the screen finds the agent in a state that warrants it (docs/emotion.md), a fast model
first says whether the request is an optional favour; if it is, the agent declines, citing its
state (gated by the ``emotion`` patch). The verdict goes back to ``ActivationWorkflow``, which
keeps it in its ``TurnState`` until it is recorded after the turn
(``deliberate.after_transmit``).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import names
from contract.policies import JUDGE_CALL, MESSAGE_PATH_DATABASE, summarized, summarized_local
from schemas.activation import ActivationInput, Draft
from schemas.deliberation import JudgeInput, Screening, ScreenInput, Verdict, fallback_verdict
from schemas.emotion import MoodNote, WeighRequestInput
from workflows.pipeline import shape

with workflow.unsafe.imports_passed_through():
    from activities.deliberation.decide import DecideActivities
    from activities.deliberation.judge import JudgeActivities
    from activities.emotion.activities import EmotionActivities

EMOTION_PATCH = "emotion"
"""Runs recorded before the emotional state never weighed a request (nor classified a turn)."""

GUARDRAIL_VETO_PATCH = "guardrail-veto-attribute"
"""Runs recorded before guardrails never tagged an activation a guardrail held."""


async def decide(
    data: ActivationInput, draft: Draft, screening: Screening | None = None
) -> Verdict:
    """Whether to transmit ``draft``, why, and what the verdict rests on.

    A ``screening`` the review step made is used as is; without one, this step screens.
    """
    if screening is None:
        screening = await _screen(data, draft)
    if screening.guardrail is not None and shape.patched(data, GUARDRAIL_VETO_PATCH):
        # Findable in the Web UI: PersynGuardrails = 'secrets-in-reply' lists held replies.
        workflow.upsert_search_attributes([names.GUARDRAILS.value_set([screening.guardrail])])
    if screening.mood is not None and shape.patched(data, EMOTION_PATCH):
        declined = await _weigh(data, screening.mood)
        if declined is not None:
            return declined
    return screening.verdict or await _judge(data, draft)


def screen_input(data: ActivationInput, draft: Draft) -> ScreenInput:
    """What the screen reads of this activation and its draft."""
    return ScreenInput(
        agent=data.agent,
        channel=data.channel,
        event=data.event,
        candidate=draft.text,
        draft_id=draft.draft_id,
        degraded=draft.degraded,
        person_id=data.person_id,
    )


async def _screen(data: ActivationInput, draft: Draft) -> Screening:
    return await workflow.execute_local_activity_method(
        DecideActivities.screen,
        screen_input(data, draft),
        **summarized_local(MESSAGE_PATH_DATABASE, "screen the reply (rules, guardrails)"),
    )


async def _weigh(data: ActivationInput, mood: MoodNote) -> Verdict | None:
    """A verdict declining an optional request in this state, or ``None`` to go on."""
    try:
        weighed: Screening = await workflow.execute_activity_method(
            EmotionActivities.weigh_request,
            WeighRequestInput(agent=data.agent, event=data.event, mood=mood),
            **summarized(JUDGE_CALL, f"weigh an optional request (feeling {mood.emotion.value})"),
        )
    except ActivityError as err:
        workflow.logger.warning("could not weigh the request; it is answered: %s", err.cause or err)
        return None
    return weighed.verdict


async def _judge(data: ActivationInput, draft: Draft) -> Verdict:
    try:
        verdict: Verdict = await workflow.execute_activity_method(
            JudgeActivities.judge,
            JudgeInput(
                agent=data.agent,
                event=data.event,
                candidate=draft.text,
                draft_id=draft.draft_id,
                window_turn_ids=data.window_turn_ids,
                participants=max(len(data.participants), 1),
            ),
            **summarized(JUDGE_CALL, "judge whether to speak"),
        )
    except ActivityError as err:
        workflow.logger.warning("no judgment on speaking; the rule decides: %s", err.cause or err)
        return fallback_verdict(addressed=data.event.addressed)
    return verdict
