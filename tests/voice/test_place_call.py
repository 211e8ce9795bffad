"""``place_call`` dials a known contact through the transport (a local fake of Vapi's API), and
the call it placed is answered as outbound when its first turn arrives."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

import activities.tools.invoke as invoke
import activities.voice.dialing as dialing
from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.voice.transport import TransportError, VapiTransport
from contract import names
from schemas.ids import new_ulid
from schemas.voice import CallDirection, CallState
from store.queries.dial_intents import record_placed
from store.queries.tool_calls import finish_call
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
        since = datetime.now(UTC)
        key = new_ulid()
        placed = await transport.dial("+15550001", "ada", "Hello!", key=key)
        assert placed.call_id.startswith("vapi-") and placed.status == "queued"
        [sent] = fake.calls
        assert sent["customer"] == {"number": "+15550001"}
        assert (sent["phoneNumberId"], sent["assistantId"]) == ("pn-1", "as-1")
        assert sent["assistantOverrides"]["firstMessage"] == "Hello!"
        assert sent["assistantOverrides"]["metadata"]["persyn_dial"] == key

        # The call is found by its key among the calls placed since; another key finds none.
        assert await transport.find(key, since) == placed
        assert await transport.find(new_ulid(), since) is None
        [lookup, _] = fake.lookups
        assert (lookup["phoneNumberId"], lookup["limit"]) == ("pn-1", "100")
        assert lookup["createdAtGe"].endswith("Z")

        fake.refuse = "customer.number must be a valid phone number"
        with pytest.raises(TransportError) as refused:
            await transport.dial("+15550001", "ada", "Hello!", key=new_ulid())
        assert "400" in str(refused.value) and "\n" not in str(refused.value)
        wrong = VapiTransport(api_key="nope", base_url=fake.base_url, phone_number_id="pn-1")
        with pytest.raises(TransportError, match="401"):
            await wrong.dial("+15550001", "ada", "Hello!", key=new_ulid())
        with pytest.raises(TransportError, match=r"refused the call lookup \(401\)"):
            await wrong.find(key, since)


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


async def test_a_retried_tool_activity_dials_once_and_opens_one_session(
    client: Client, stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The database goes away just after the transport answered: neither the call's ID nor the
    # tool's result can be written, the activity fails, and Temporal runs it again.
    faults = {"record_placed": 1, "finish_call": 1}

    def failing_once(name: str, real: Callable[..., Awaitable[None]]) -> Callable[..., Any]:
        async def write(*args: Any, **kwargs: Any) -> None:
            if faults[name] > 0:
                faults[name] -= 1
                raise OSError("the database went away")
            await real(*args, **kwargs)

        return write

    monkeypatch.setattr(dialing, "record_placed", failing_once("record_placed", record_placed))
    monkeypatch.setattr(invoke, "finish_call", failing_once("finish_call", finish_call))
    async with fake_vapi() as fake:
        voice = {
            "vapi_api_key": KEY,
            "vapi_base_url": fake.base_url,
            "vapi_phone_number_id": "pn-1",
        }
        async with running_worker(
            client,
            stack,
            rules=[AFTER_TOOL, CALL_GRACE],
            settings_overrides={"voice": voice, "approvals": {"tools": {"place_call": "never"}}},
        ) as worker:
            agent = (await worker.create_agent(name="Ada")).handle
            person = await known_person(worker.db, agent, "+15550001", "Grace")
            receipt = await worker.say(agent, "Please call Grace.")
            assert receipt.marker is not None
            [call] = await tool_calls(worker, str(receipt.marker.activation_id))
            assert faults == {"record_placed": 0, "finish_call": 0}
            assert len(fake.calls) == 1, "Grace's phone rang more than once"
            [placed] = fake.placed
            assert json.loads(str(call.result))["call_id"] == placed["id"]
            assert placed["assistantOverrides"]["metadata"]["persyn_dial"] == call.id
            assert len(fake.lookups) == 1  # the retry asked the transport before it dialled
            state: CallState = await client.get_workflow_handle(
                names.call_workflow_id(placed["id"])
            ).query(names.CALL_STATE, result_type=CallState)
            assert state.call.direction is CallDirection.OUTBOUND
            assert state.call.person_id == person
