"""``place_call`` dials a known contact through the transport (a local fake of Vapi's API), and
the call it placed is answered as outbound when its first turn arrives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.voice.transport import TransportError, VapiTransport
from contract import names
from schemas.voice import CallDirection, CallState
from tests.autonomy.conftest import tool_calls
from tests.harness import Stack, running_worker
from tests.voice.calls import dialog, known_person, say, serving_calls, turn
from tests.voice.fake_vapi import KEY, fake_vapi

CALL_GRACE = ScriptRule(
    task="respond",
    match="call grace",
    after_tool=False,
    tool_calls=[
        ScriptToolCall(
            name="place_call", arguments={"contact": "Grace", "first_message": "Hi Grace!"}
        )
    ],
)
AFTER_TOOL = ScriptRule(task="respond", after_tool=True, reply="Done: {tool}")


async def test_the_transport_sends_vapis_call_request_and_reads_its_id() -> None:
    async with fake_vapi() as fake:
        transport = VapiTransport(
            api_key=KEY, base_url=fake.base_url, phone_number_id="pn-1", assistant_id="as-1"
        )
        placed = await transport.dial("+15550001", "ada", "Hello!")
        assert placed.call_id.startswith("vapi-") and placed.status == "queued"
        [sent] = fake.calls
        assert sent["customer"] == {"number": "+15550001"}
        assert (sent["phoneNumberId"], sent["assistantId"]) == ("pn-1", "as-1")
        assert sent["assistantOverrides"]["firstMessage"] == "Hello!"

        fake.refuse = "customer.number must be a valid phone number"
        with pytest.raises(TransportError) as refused:
            await transport.dial("+15550001", "ada", "Hello!")
        assert "400" in str(refused.value) and "\n" not in str(refused.value)
        wrong = VapiTransport(api_key="nope", base_url=fake.base_url, phone_number_id="pn-1")
        with pytest.raises(TransportError, match="401"):
            await wrong.dial("+15550001", "ada", "Hello!")


async def test_place_call_dials_and_the_answered_call_is_outbound(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with fake_vapi() as fake:
        voice = {
            "vapi_api_key": KEY,
            "vapi_base_url": fake.base_url,
            "vapi_phone_number_id": "pn-1",
        }
        # The operator lets this agent ring people without asking (calls wait by default).
        allowed = {"tools": {"place_call": "never"}}
        async with running_worker(
            client,
            stack,
            rules=[AFTER_TOOL, CALL_GRACE],
            settings_overrides={"voice": voice, "approvals": allowed},
        ) as worker:
            agent = (await worker.create_agent(name="Ada")).handle
            person = await known_person(worker.db, agent, "+15550001", "Grace")
            receipt = await worker.say(agent, "Please call Grace.")
            assert receipt.marker is not None
            [call] = await tool_calls(worker, str(receipt.marker.activation_id))
            placed = json.loads(str(call.result))
            assert placed["contact"] == "Grace"
            assert [c["customer"]["number"] for c in fake.calls] == ["+15550001"]
            call_id = placed["call_id"]
            state: CallState = await client.get_workflow_handle(
                names.call_workflow_id(call_id)
            ).query(names.CALL_STATE, result_type=CallState)
            assert state.call.direction is CallDirection.OUTBOUND
            assert state.call.person_id == person

            # Grace answers: the transport's first turn carries no caller number of its own.
            settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
            async with serving_calls(settings, client) as line:
                body = turn(agent, call_id, "Hello?")
                del body["call"]["customer"]
                body["call"]["type"] = "outboundPhoneCall"
                assert await say(line, body) == (200, "Hello?")
                await line.runtime.drain()
                system = line.fast.requests[-1].system
                assert "Ada called Grace on the phone, and Grace just answered." in system
            rows = await dialog(worker, agent)
            [first] = [r for r in rows if r.role == "person" and r.text.endswith("Hello?")]
            assert first.speaker_id == person and "just answered" in first.text
