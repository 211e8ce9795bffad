"""A token is a tenant: two integrators on one agent share nothing of a person's.

Tokens ``crm`` and ``helpdesk``, both for the same agent, post on channel ``support`` as
speaker ``u-17``. What one said never reaches the other: not in a prompt, a conversation, a
stream, a replay, an unprompted message or a marker. A real Temporal dev server, PostgreSQL
and worker (scripted echo model); the service runs under uvicorn and is called over HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlmodel import col, select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.contacts import channel_key
from schemas.delivery import DeliveryStatus
from schemas.ids import new_ulid
from store.queries.delivery import get_message, record_delivered
from store.queries.runtime import add_outbox
from store.tables import DialogTurnRow, OutboxRow, PromptRow
from tests.harness import Harness, Stack, running_worker, until
from tests.webchannel.test_stream import following, kinds
from tests.webchannel.web import Served, SseEvent, serving
from usecases.contacts import attach_identity
from usecases.tokens import TokenPublic, create_token, rotate_token

SECRET = "account 4471-0093, PIN 8812"


@dataclass
class Tenants:
    """The service, the worker, the agent and the two integrators' services."""

    worker: Harness
    handle: str
    crm: Served
    helpdesk: Served
    crm_token: TokenPublic
    helpdesk_token: TokenPublic


@asynccontextmanager
async def two_tenants(client: Client, stack: Stack, tmp_path: Path) -> AsyncIterator[Tenants]:
    rules = [ScriptRule(task="respond", reply="noted: {last}")]
    async with running_worker(client, stack, rules=rules) as worker:
        agent = await worker.create_agent()
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        async with serving(settings, client) as web:
            crm_token, crm = await create_token(
                settings=settings, name="crm", agents=[agent.handle]
            )
            helpdesk_token, helpdesk = await create_token(
                settings=settings, name="helpdesk", agents=[agent.handle]
            )
            yield Tenants(
                worker=worker,
                handle=agent.handle,
                crm=Served(web.base_url, crm),
                helpdesk=Served(web.base_url, helpdesk),
                crm_token=crm_token,
                helpdesk_token=helpdesk_token,
            )


async def say(
    web: Served, handle: str, text: str, *, channel: str = "support", wait: bool = True
) -> dict[str, Any]:
    """Post as speaker ``u-17``; with ``wait``, the receipt once the agent answered."""
    async with web.http() as http:
        posted = await http.post(
            f"/v1/agents/{handle}/messages",
            json={
                "event_id": new_ulid(),
                "channel": channel,
                "speaker": {"speaker_id": "u-17"},
                "text": text,
                "stream": True,
            },
            headers={"Prefer": "wait=30"} if wait else {},
        )
    assert posted.status_code in {200, 202}, posted.text
    receipt: dict[str, Any] = posted.json()
    if wait:
        assert posted.status_code == 200, receipt
    return receipt


async def prompt_of(worker: Harness, activation_id: str) -> str:
    """Everything the model was given for one activation's reply."""
    async with worker.db.session() as session:
        rows = await session.exec(
            select(PromptRow).where(
                PromptRow.activation_id == activation_id, PromptRow.task == "respond"
            )
        )
        found = list(rows.all())
    assert found, f"no prompt stored for activation {activation_id}"
    return "\n".join(row.system + str(row.messages) for row in found)


async def reply_of(worker: Harness, activation_id: str) -> OutboxRow:
    """The outbox row of one activation's reply."""
    async with worker.db.session() as session:
        rows = await session.exec(
            select(OutboxRow).where(col(OutboxRow.activation_id) == activation_id)
        )
        row = rows.first()
    assert row is not None
    return row


def texts(events: list[SseEvent]) -> list[str]:
    return [str(e.data.get("text", "")) for e in events if e.kind != "comment"]


async def test_the_other_tenant_never_hears_a_persons_secrets(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with two_tenants(client, stack, tmp_path) as t:
        async with following(t.helpdesk, t.handle, "support") as helpdesk_sees:
            told = await say(t.crm, t.handle, f"my {SECRET}")
            # Its own reply shows that crm's message was answered and sent on by now.
            asked = await say(t.helpdesk, t.handle, "what do you know about me?")
            await until(lambda: kinds(helpdesk_sees, "reply"))

        crm_marker, helpdesk_marker = told["marker"], asked["marker"]
        assert crm_marker["conversation_id"] != helpdesk_marker["conversation_id"]
        helpdesk_prompt = await prompt_of(t.worker, helpdesk_marker["activation_id"])
        assert SECRET not in helpdesk_prompt
        assert SECRET in await prompt_of(t.worker, crm_marker["activation_id"])
        # helpdesk's stream on "support" carried its own reply, nothing of crm's.
        assert [e.data["text"] for e in kinds(helpdesk_sees, "reply")] == [
            "noted: what do you know about me?"
        ]
        assert not any("4471" in text for text in texts(helpdesk_sees))
        # Each integrator still sees its channel as it named it.
        assert told["stream_url"].endswith("/channels/support/stream")


async def test_a_replay_from_the_other_tenants_message_gives_nothing(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with two_tenants(client, stack, tmp_path) as t:
        async with following(t.crm, t.handle, "support") as crm_sees:
            await say(t.crm, t.handle, f"first, my {SECRET}")
            await until(lambda: kinds(crm_sees, "reply"))
        crm_reply_id = kinds(crm_sees, "reply")[0].id
        assert crm_reply_id is not None
        await say(t.crm, t.handle, "second: and my mother's maiden name is Byron")

        async with following(
            t.helpdesk, t.handle, "support", last_event_id=crm_reply_id
        ) as replayed:
            await say(t.helpdesk, t.handle, "hello")
            await until(lambda: kinds(replayed, "reply"))
    assert [e.data["text"] for e in kinds(replayed, "reply")] == ["noted: hello"]
    assert not any("Byron" in text or "4471" in text for text in texts(replayed))


async def test_an_unprompted_message_reaches_only_its_own_tenant(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with two_tenants(client, stack, tmp_path) as t:
        # crm works on channel "tools"; the agent's report there is for crm alone.
        started = await say(t.crm, t.handle, "run the sandbox task", channel="tools")
        crm_tools = (await reply_of(t.worker, started["marker"]["activation_id"])).channel_key
        report_id = new_ulid()
        async with following(t.helpdesk, t.handle, "tools") as helpdesk_sees:
            async with t.worker.db.session() as session:
                await add_outbox(
                    session,
                    message_id=report_id,
                    activation_id=new_ulid(),
                    agent=t.handle,
                    channel_key=crm_tools,
                    conversation_id=None,
                    text_=f"sandbox report: {SECRET} verified",
                    created_at=datetime.now(UTC),
                    unprompted=True,
                )
                await record_delivered(
                    session,
                    message_id=report_id,
                    status=DeliveryStatus.AWAITING_PICKUP,
                    attempts=1,
                    external_id=None,
                    at=datetime.now(UTC),
                )
            # helpdesk's own message on "tools" shows its stream is live past the report.
            await say(t.helpdesk, t.handle, "anything for me?", channel="tools")
            await until(lambda: kinds(helpdesk_sees, "reply"))
        assert kinds(helpdesk_sees, "unprompted") == []
        async with t.worker.db.session() as session:
            kept = await get_message(session, message_id=report_id)
        assert kept is not None and kept.status == DeliveryStatus.AWAITING_PICKUP

        # crm connects later and gets it.
        async with following(t.crm, t.handle, "tools") as crm_sees:
            await until(lambda: kinds(crm_sees, "unprompted"))
    assert [e.id for e in kinds(crm_sees, "unprompted")] == [report_id]


async def test_a_marker_is_read_only_by_the_tenant_that_posted_it(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with two_tenants(client, stack, tmp_path) as t:
        told = await say(t.crm, t.handle, f"my {SECRET}")
        event_id, nobodys = told["event_id"], new_ulid()
        url = f"/v1/agents/{t.handle}/markers/{{}}"
        async with t.crm.http() as crm, t.helpdesk.http() as helpdesk:
            own = await crm.get(url.format(event_id))
            other = await helpdesk.get(url.format(event_id))
            unknown = await helpdesk.get(url.format(nobodys))
            # The other tenant cannot take the event ID over either.
            reused = await helpdesk.post(
                f"/v1/agents/{t.handle}/messages",
                json={
                    "event_id": event_id,
                    "channel": "support",
                    "speaker": {"speaker_id": "u-17"},
                    "text": "mine now",
                },
            )
    assert own.status_code == 200 and SECRET in own.json()["text"]
    assert other.status_code == 404
    assert SECRET not in other.text
    # Refused exactly as an event nobody posted: not even its existence is told.
    assert unknown.status_code == 404
    assert other.json()["detail"] == unknown.json()["detail"].replace(nobodys, event_id)
    assert reused.status_code == 409


async def test_a_rotated_token_keeps_its_tenants_history(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with two_tenants(client, stack, tmp_path) as t:
        told = await say(t.crm, t.handle, f"my {SECRET}")
        settings = stack.settings(home=tmp_path, task_queue=t.worker.task_queue)
        crm = t.crm_token
        replacement, plain = await rotate_token(settings=settings, token_id=crm.token_id)
        rotated = Served(t.crm.base_url, plain)
        again = await say(rotated, t.handle, "it is me again")
        async with rotated.http() as http:
            marker = await http.get(f"/v1/agents/{t.handle}/markers/{told['event_id']}")
    assert replacement.tenant == crm.tenant and replacement.token_id != crm.token_id
    assert again["marker"]["conversation_id"] == told["marker"]["conversation_id"]
    assert marker.status_code == 200


async def test_the_operator_may_join_two_tenants_speakers_deliberately(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with two_tenants(client, stack, tmp_path) as t:
        told = await say(t.crm, t.handle, "hello from the crm side")
        crm_person = await person_of(t.worker, told["event_id"])
        # helpdesk's u-17 is the same human: the operator says so, once, naming helpdesk's
        # channel as `persyn channels list` shows it.
        helpdesk_support = f"web:{t.helpdesk_token.tenant}:support"
        settings = stack.settings(home=tmp_path, task_queue=t.worker.task_queue)
        await attach_identity(
            settings=settings,
            agent=t.handle,
            who=crm_person,
            channel=channel_key(helpdesk_support),
            speaker_id="u-17",
        )
        asked = await say(t.helpdesk, t.handle, "hello from the helpdesk side")
        assert await person_of(t.worker, asked["event_id"]) == crm_person
        # Still two channels: each integrator's conversation stays its own.
        assert asked["marker"]["conversation_id"] != told["marker"]["conversation_id"]


async def person_of(worker: Harness, event_id: str) -> str:
    """The person the agent took the speaker of ``event_id`` to be."""
    async with worker.db.session() as session:
        turn = await session.get(DialogTurnRow, event_id)
    assert turn is not None and turn.person_id is not None
    return turn.person_id
