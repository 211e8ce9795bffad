"""Where the background guardrails plug into ``ConversationWorkflow`` (workflow-side).

After each exchange the conversation evaluates the background rules in a local activity and,
when one fired or failed, starts a ``GuardrailWorkflow`` to act on it (a child with
``ABANDON``, never awaited on the reply's path); before the ``guardrails-in-conversation``
patch it started one for every exchange, which evaluated. The conversation keeps the latest
one's handle and waits for it before it finishes closing, as it waits for its closing
consolidation: a child left running past its parent stalls Temporal's time-skipping test
server, and a guardrail that ends the conversation has had its say by then. The wait is
bounded, so a run still retrying a supervisor's webhook does not hold the close. Histories
recorded before guardrails existed replay unchanged: the start is gated by the
``guardrails`` patch.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError
from temporalio.workflow import ChildWorkflowHandle, ParentClosePolicy

from contract import names
from contract.policies import BACKGROUND, GUARDRAIL_SCREEN, summarized_local
from schemas.conversation import ConversationInput, InboundTurn
from schemas.dialog import DialogTurn
from schemas.guardrails import GuardrailEvaluation, GuardrailInput, GuardrailResult
from workflows import up_front
from workflows.guardrail import GuardrailWorkflow

with workflow.unsafe.imports_passed_through():
    from activities.guardrails.activities import GuardrailActivities

PATCH = "guardrails"
SCREEN_PATCH = "guardrails-in-conversation"
"""The conversation evaluates the rules itself and starts a run only for a firing."""
SETTLE_PATCH = "guardrails-settle"
SETTLE_WAIT = timedelta(minutes=2)
"""How long a closing conversation waits for its last guardrail run (usually well under 1 s)."""
PATCHES = (PATCH, SCREEN_PATCH, SETTLE_PATCH)
"""Every patch the hooks ask."""

Running = ChildWorkflowHandle[GuardrailWorkflow, GuardrailResult]


def _request(
    data: ConversationInput, turn: InboundTurn, activation_id: str, reply: DialogTurn | None
) -> GuardrailInput:
    return GuardrailInput(
        activation_id=activation_id,
        agent=data.agent,
        conversation_id=data.conversation_id,
        channel=data.channel,
        person_id=turn.person_id,
        inbound_turn_id=turn.event.event_id,
        reply_turn_id=reply.turn_id if reply is not None else None,
        at=workflow.now(),
    )


async def screen(
    data: ConversationInput, turn: InboundTurn, activation_id: str, reply: DialogTurn | None
) -> Running | None:
    """Evaluate the background rules here; start a guardrail run only when one fired or failed.

    Most exchanges fire nothing, and a workflow run per exchange to say so cost the server and
    the worker more than the evaluation (``bench/message_cost.py``). Runs recorded before the
    ``guardrails-in-conversation`` patch started a run for every exchange.
    """
    if not up_front.conversation_patched(data, SCREEN_PATCH):
        return await start(data, turn, activation_id, reply)
    request = _request(data, turn, activation_id, reply)
    try:
        evaluation: GuardrailEvaluation = await workflow.execute_local_activity_method(
            GuardrailActivities.evaluate,
            request,
            **summarized_local(GUARDRAIL_SCREEN, "evaluate the guardrails over recent history"),
        )
    except ActivityError as err:
        workflow.logger.warning("guardrail evaluation failed; nothing fired: %s", err)
        return None
    if not evaluation.firings and not evaluation.failed:
        return None
    return await start(data, turn, activation_id, reply, evaluation=evaluation)


async def start(
    data: ConversationInput,
    turn: InboundTurn,
    activation_id: str,
    reply: DialogTurn | None,
    *,
    evaluation: GuardrailEvaluation | None = None,
) -> Running | None:
    """Start the background guardrails of one exchange; ``None`` when they did not start."""
    if not up_front.conversation_patched(data, PATCH):
        return None
    request = _request(data, turn, activation_id, reply)
    if evaluation is not None:
        request = request.model_copy(update={"evaluation": evaluation})
    try:
        return await workflow.start_child_workflow(
            GuardrailWorkflow.run,
            request,
            id=names.guardrail_workflow_id(activation_id),
            parent_close_policy=ParentClosePolicy.ABANDON,
            priority=BACKGROUND,
            search_attributes=names.search_attributes(
                agent=data.agent, channel=data.channel.key, conversation=data.conversation_id
            ),
            static_summary=f"guardrails on {data.agent}'s exchange with {turn.person_name}",
        )
    except asyncio.CancelledError:
        raise
    except Exception as err:  # background work: the conversation goes on without it
        workflow.logger.warning("guardrails did not start: %s", err)
        return None


async def settle(data: ConversationInput, running: Running | None) -> None:
    """Wait for the latest guardrail run (before the conversation finishes closing).

    The wait is bounded (behind the ``guardrails-settle`` patch): a supervisor's webhook that
    is down keeps its run retrying for hours, and must not keep the conversation open too.
    """
    if running is None:
        return
    if up_front.conversation_patched(data, SETTLE_PATCH):
        try:
            await workflow.wait_condition(
                running.done,
                timeout=SETTLE_WAIT,
                timeout_summary="the last guardrail run is still acting; the close goes on",
            )
        except TimeoutError:
            workflow.logger.warning("the last guardrail run is still acting; not waiting")
            return
    try:
        await running
    except asyncio.CancelledError:
        raise
    except Exception as err:  # its failure is its own; the close goes on
        workflow.logger.warning("guardrail run failed: %s", err)
