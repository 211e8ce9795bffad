"""The agent's lock, from the side of the runs that hold it.

An event holds its agent's lock from the moment the agent dispatches it until the agent hears
how it ended. Every outcome of a dispatched event is reported through :func:`release`: the
activation's own outcome, and the ``failed`` marker its conversation sends when the activation
failed or was terminated. The agent's side of the same path is ``AgentWorkflow._release``.

Deterministic: only ``workflow`` APIs.
"""

from __future__ import annotations

from temporalio import workflow

from contract import names
from schemas.activation import ActivationFinished, ActivationInput
from schemas.conversation import ExchangeDone, InboundTurn, TurnTaken
from schemas.dialog import DialogTurn
from schemas.events import CompletionMarker


async def release(agent: str, marker: CompletionMarker) -> None:
    """Tell ``agent`` the event of ``marker`` left the critical section, and how it ended.

    The agent accepts it only from the activation it dispatched (it names the activation), so
    the marker must carry that activation's ID.
    """
    await workflow.get_external_workflow_handle(names.agent_workflow_id(agent)).signal(
        names.ACTIVATION_FINISHED, ActivationFinished(marker=marker)
    )


def exchange_done(data: ActivationInput, reply: DialogTurn | None) -> ExchangeDone:
    """How an admitted event's exchange ended, with the person's turn when the run carries it."""
    taken = None
    if data.person_turn is not None:
        inbound = InboundTurn(
            event=data.event,
            person_id=data.person_id,
            person_name=data.person_name,
            activation_id=data.activation_id,
        )
        taken = TurnTaken(inbound=inbound, turn=data.person_turn)
    return ExchangeDone(
        activation_id=data.activation_id, event_id=data.event.event_id, reply=reply, taken=taken
    )


async def tell_conversation(data: ActivationInput, reply: DialogTurn | None) -> None:
    """Tell an admitted event's conversation how its exchange ended (``exchange_done``).

    The agent holds the lock, not the conversation, so nothing waits on this signal: a
    conversation already gone (closed, deleted) is logged, not an error.
    """
    conversation_id, done = data.conversation_id, exchange_done(data, reply)
    try:
        await workflow.get_external_workflow_handle(
            names.conversation_workflow_id(conversation_id)
        ).signal(names.EXCHANGE_DONE, done)
    except Exception as err:
        workflow.logger.warning("conversation %s not told: %s", conversation_id, err)
