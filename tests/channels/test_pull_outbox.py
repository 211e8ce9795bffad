"""A Temporal-only integrator receives what the agent sends on its own, exactly once.

The agent messages a person on ``crm:support`` (a service no adapter serves); the message is kept
for pickup, and the integrator takes it with the agent's ``pull_outbox`` update: returned until
acknowledged by its ID, never after.
"""

from __future__ import annotations

import json

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from contract import names
from schemas.delivery import DeliveryResult, DeliveryStatus
from schemas.events import ChannelRef
from schemas.pickup import PullOutboxInput, PullOutboxResult
from tests.autonomy.conftest import autonomy_worker, tool_calls
from tests.channels.helpers import outbox_row
from tests.harness import Harness, Stack, terminal

SUPPORT = ChannelRef(service="crm", channel="support")
TELL_ADA = ScriptRule(
    task="respond",
    match="tell ada",
    after_tool=False,
    tool_calls=[
        ScriptToolCall(
            name="message_contact",
            arguments={"contact": "ada", "text": "Your refund went out.", "channel": SUPPORT.key},
        )
    ],
)
AFTER_TOOL = ScriptRule(task="respond", after_tool=True, reply="Done: {tool}")


async def _pull(harness: Harness, agent: str, **fields: object) -> PullOutboxResult:
    handle = harness.client.get_workflow_handle(names.agent_workflow_id(agent))
    result: PullOutboxResult = await handle.execute_update(
        names.PULL_OUTBOX, PullOutboxInput.model_validate(fields), result_type=PullOutboxResult
    )
    return result


async def _message_to_ada(harness: Harness, agent: str) -> str:
    """Have the agent message Ada on crm:support unprompted; the message's ID once it is kept."""
    await harness.say(agent, "Hi, I'm Ada.", speaker="ada", channel=SUPPORT)
    receipt = await harness.say(agent, "Please tell Ada.", speaker="bob", channel=terminal("b"))
    assert receipt.marker is not None
    [call] = await tool_calls(harness, str(receipt.marker.activation_id))
    sent = json.loads(str(call.result))
    assert sent["channel"] == SUPPORT.key
    message_id = str(sent["message_id"])
    delivery = harness.client.get_workflow_handle(
        names.delivery_workflow_id(message_id), result_type=DeliveryResult
    )
    result = await delivery.result()
    assert (result.status, result.reason) == (DeliveryStatus.AWAITING_PICKUP, None)
    return message_id


async def test_an_unprompted_message_is_pulled_until_acknowledged(
    client: Client, stack: Stack
) -> None:
    async with autonomy_worker(client, stack, rules=[AFTER_TOOL, TELL_ADA]) as harness:
        agent = (await harness.create_agent()).handle
        message_id = await _message_to_ada(harness, agent)

        first = await _pull(harness, agent, service="crm")
        again = await _pull(harness, agent, service="crm", channel="support")
        elsewhere = await _pull(harness, agent, service="crm", channel="billing")
        acked = await _pull(harness, agent, service="crm", ack=[message_id])
        row = await outbox_row(harness, message_id)
        twice = await _pull(harness, agent, service="crm", ack=[message_id])
        after = await outbox_row(harness, message_id)

    [message] = first.messages
    assert (message.message_id, message.service, message.channel) == (
        message_id,
        "crm",
        "support",
    )
    assert (message.text, message.recipients) == ("Your refund went out.", ["ada"])
    assert first.acknowledged == 0
    assert [m.message_id for m in again.messages] == [message_id]
    assert elsewhere.messages == []
    assert (acked.acknowledged, acked.messages) == (1, [])
    assert row is not None and row.status == "delivered" and row.delivered_at is not None
    assert (twice.acknowledged, twice.messages) == (0, [])
    assert after is not None and after.status == "delivered"
    assert after.delivered_at == row.delivered_at


@pytest.mark.parametrize("service", ["web", "self", "agent"])
async def test_a_pull_for_a_service_persyn_delivers_itself_is_refused(
    harness: Harness, service: str
) -> None:
    agent = (await harness.create_agent()).handle
    await harness.say(agent, "hello", channel=SUPPORT)  # its inbox is running
    handle = harness.client.get_workflow_handle(names.agent_workflow_id(agent))
    with pytest.raises(WorkflowUpdateFailedError) as caught:
        # Raw JSON, as another language's client sends it: the model would refuse it here.
        await handle.execute_update(names.PULL_OUTBOX, {"service": service})
    cause = caught.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "InvalidInput"
    assert f"service {service!r} cannot be pulled" in cause.message
