"""Where the background guardrails plug into ``ConversationWorkflow`` (workflow-side).

After each activation the conversation starts a ``GuardrailWorkflow`` for that exchange (a
child with ``ABANDON``, never awaited on the reply's path). The conversation keeps the latest
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
from temporalio.workflow import ChildWorkflowHandle, ParentClosePolicy

from contract import names
from contract.policies import BACKGROUND
from schemas.conversation import ConversationInput, InboundTurn
from schemas.dialog import DialogTurn
from schemas.guardrails import GuardrailInput, GuardrailResult
from workflows.guardrail import GuardrailWorkflow

PATCH = "guardrails"
SETTLE_PATCH = "guardrails-settle"
SETTLE_WAIT = timedelta(minutes=2)
"""How long a closing conversation waits for its last guardrail run (usually well under 1 s)."""

Running = ChildWorkflowHandle[GuardrailWorkflow, GuardrailResult]


async def start(
    data: ConversationInput, turn: InboundTurn, activation_id: str, reply: DialogTurn | None
) -> Running | None:
    """Start the background guardrails of one exchange; ``None`` when they did not start."""
    if not workflow.patched(PATCH):
        return None
    try:
        return await workflow.start_child_workflow(
            GuardrailWorkflow.run,
            GuardrailInput(
                activation_id=activation_id,
                agent=data.agent,
                conversation_id=data.conversation_id,
                channel=data.channel,
                person_id=turn.person_id,
                inbound_turn_id=turn.event.event_id,
                reply_turn_id=reply.turn_id if reply is not None else None,
                at=workflow.now(),
            ),
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


async def settle(running: Running | None) -> None:
    """Wait for the latest guardrail run (before the conversation finishes closing).

    The wait is bounded (behind the ``guardrails-settle`` patch): a supervisor's webhook that
    is down keeps its run retrying for hours, and must not keep the conversation open too.
    """
    if running is None:
        return
    if workflow.patched(SETTLE_PATCH):
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
