"""Step: generate the candidate response, running the tool loop (spec §3 step 3, §4.6).

Each round is a regular activity (``generation.generate``): every attempt is visible in the Web
UI and transient failures are retried with backoff. When the model calls tools, each call runs
as its own activity (summary: the tool's name) and the results feed the next round; after the
configured number of rounds the model must answer in words. The calls' arguments, results and
the growing message list stay in PostgreSQL: history holds only their IDs. A tool that fails
returns its error to the model; a round that keeps failing degrades the whole reply to the
safe fallback instead of failing the activation. A call the round marked for approval waits
for a person's decision first (``workflows.pipeline.approval``); refused, it does not run.

Heartbeats first run a self-assessment (a counter-perspective over recent memories) inside this
activation, so its model call is attributed to the self-reflection conversation. It runs only
there, on the agent's own reflection channel: its material reads across channels, so it must
never land in a conversation someone else is part of, and the memories it reads are fenced by
sensitivity against the participants present, like any recall.

A turn without tool calls has the same history as before the tool loop existed (one
``generation.generate`` activity whose input and result only gained defaulted fields), so
histories recorded earlier still replay.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract.policies import MODEL_CALL, SELF_ASSESSMENT, TOOL_CALL, summarized
from schemas.activation import FALLBACK_REPLY, ActivationInput, Draft, PromptRef
from schemas.approvals import refusal_text
from schemas.autonomy import impulse_channel
from schemas.events import Trigger
from schemas.streaming import StreamTarget
from schemas.tools import (
    InvokeToolInput,
    RespondInput,
    SelfAssessInput,
    ToolCallRef,
    ToolContext,
    ToolGeneration,
    ToolOutcome,
)
from workflows.pipeline import shape
from workflows.pipeline.approval import PATCH as APPROVAL_PATCH
from workflows.pipeline.approval import ApprovalGate

with workflow.unsafe.imports_passed_through():
    from activities.autonomy.assess import AssessActivities
    from activities.generation import GenerationActivities
    from activities.tools.invoke import ToolActivities

PATCH_DRAFTS = "reply-draft-by-reference"
"""The reply is stored as a draft and later steps get its ``DraftRef``. Deprecated: an
activation runs minutes, so none started before the patch (2026-12-01) is still open
(docs/operations.md, "The life of a patch")."""

PATCH_OWN_CHANNEL = "self-assessment-own-channel-only"
"""A heartbeat's self-assessment runs on the agent's own reflection channel only. Deprecated,
as ``PATCH_DRAFTS`` is: the activations that ran it on any channel have ended."""


async def respond(
    data: ActivationInput, prompt: PromptRef, approvals: ApprovalGate | None = None
) -> Draft:
    """The candidate reply, or the fallback if generation keeps failing.

    Args:
        data: The activation's input.
        prompt: The assembled prompt.
        approvals: The run's approvals, where a call marked for approval waits (without one,
            every call runs at once).
    """
    if data.event.trigger is Trigger.HEARTBEAT and _may_self_assess(data):
        await _self_assess(data, prompt)
    return await _tool_loop(data, prompt, approvals)


def _may_self_assess(data: ActivationInput) -> bool:
    """A heartbeat assesses itself only on the agent's own reflection channel."""
    if data.channel.key == impulse_channel(Trigger.HEARTBEAT).key:
        return True
    shape.deprecate_patch(data, PATCH_OWN_CHANNEL)
    return False


async def _tool_loop(
    data: ActivationInput, prompt: PromptRef, approvals: ApprovalGate | None
) -> Draft:
    event = data.event
    stream = StreamTarget(key=event.event_id) if event.stream else None
    context = ToolContext(
        agent=data.agent,
        activation_id=data.activation_id,
        conversation_id=data.conversation_id,
        channel=data.channel,
        person_id=data.person_id,
        participants=data.participants,
        trigger=event.trigger,
    )
    # Once per activation, before its first generation, where the patch was first recorded.
    shape.deprecate_patch(data, PATCH_DRAFTS)
    round_, bound = 0, None
    while True:
        allow = bound is None or round_ < bound
        try:
            generation: ToolGeneration = await workflow.execute_activity_method(
                GenerationActivities.generate,
                RespondInput(
                    prompt=prompt,
                    stream=stream,
                    agent=data.agent,
                    round=round_,
                    tools="offer" if allow else "final",
                    draft=True,
                ),
                **summarized(
                    MODEL_CALL,
                    f"generate a reply for {data.person_name}"
                    + (f" (round {round_ + 1})" if round_ else ""),
                ),
            )
        except ActivityError as err:
            workflow.logger.warning("generation failed after retries: %s", err.cause or err)
            return Draft(text=FALLBACK_REPLY, degraded=True)
        bound = generation.max_rounds if bound is None else bound
        if not allow or not (generation.tool_calls or generation.paused):
            return Draft(text=generation.text, model=generation.model, ref=generation.draft)
        # Calls past the bound are not run: the last round tells the model they did not
        # finish. A paused provider-run tool is resumed by simply sending the turn again.
        if generation.tool_calls and round_ < bound:
            workflow.set_current_details(
                f"Round {round_ + 1}: running "
                + ", ".join(call.name for call in generation.tool_calls)
            )
            await asyncio.gather(
                *(_invoke(call, context, approvals) for call in generation.tool_calls)
            )
        round_ += 1


async def _invoke(
    call: ToolCallRef, context: ToolContext, approvals: ApprovalGate | None
) -> ToolOutcome:
    # Only a call the round marked reaches the patch: no run recorded before it had one.
    if call.approval is not None and approvals is not None and workflow.patched(APPROVAL_PATCH):
        decision = await approvals.wait_for(call, call.approval)
        if not decision.approved:
            # Recorded as the call's result: the model reads the refusal on its next round.
            return ToolOutcome(
                call_id=call.call_id, name=call.name, ok=False, error=refusal_text(decision)
            )
    try:
        outcome: ToolOutcome = await workflow.execute_activity_method(
            ToolActivities.invoke,
            InvokeToolInput(call_id=call.call_id, context=context),
            **summarized(TOOL_CALL, call.name),
        )
    except ActivityError as err:
        # The next round tells the model this call did not finish; the turn goes on.
        workflow.logger.warning("tool %s gave up: %s", call.name, err.cause or err)
        return ToolOutcome(call_id=call.call_id, name=call.name, ok=False, error="did not finish")
    return outcome


async def _self_assess(data: ActivationInput, prompt: PromptRef) -> None:
    try:
        await workflow.execute_activity_method(
            AssessActivities.self_assess,
            SelfAssessInput(
                prompt=prompt,
                agent=data.agent,
                activation_id=data.activation_id,
                event_id=data.event.event_id,
                participants=list(data.participants),
            ),
            **summarized(SELF_ASSESSMENT, "self-assessment"),
        )
    except ActivityError as err:
        # The beat still acts, on its goals and memories, without the critique.
        workflow.logger.warning("self-assessment failed: %s", err.cause or err)
