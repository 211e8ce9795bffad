"""A reply on the channel's stream names the message it answers, and a client that posted a
message resumes the stream from that message's reply (docs/integration.md's example)."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.ids import new_ulid
from tests.harness import Stack, running_worker, until
from tests.webchannel.test_stream import following, kinds
from tests.webchannel.web import Served, serving


async def _post(web: Served, handle: str, text: str, *, wait: bool = False) -> str:
    event_id = new_ulid()
    async with web.http() as http:
        posted = await http.post(
            f"/v1/agents/{handle}/messages",
            json={
                "event_id": event_id,
                "channel": "support",
                "speaker": {"speaker_id": "u-17"},
                "text": text,
            },
            headers={"Prefer": "wait=30"} if wait else {},
        )
    assert posted.status_code == (200 if wait else 202), posted.text
    return event_id


async def test_replies_carry_their_event_and_a_posted_event_id_resumes_from_its_reply(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    rules = [ScriptRule(task="respond", reply="echo: {last}")]
    async with running_worker(client, stack, rules=rules) as worker:
        agent = await worker.create_agent()
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        async with serving(settings, client) as web:
            async with following(web, agent.handle, "support") as live:
                first = await _post(web, agent.handle, "first")
                await until(lambda: kinds(live, "reply"))
            [reply] = kinds(live, "reply")
            assert reply.data["event_id"] == first and reply.data["text"] == "echo: first"

            # Posted and answered while nobody followed; then the stream resumes from it.
            second = await _post(web, agent.handle, "second", wait=True)
            third = await _post(web, agent.handle, "third", wait=True)
            async with following(web, agent.handle, "support", last_event_id=second) as resumed:
                await until(lambda: len(kinds(resumed, "reply")) == 2)
            replies = [(r.data["event_id"], r.data["text"]) for r in kinds(resumed, "reply")]
            assert replies == [(second, "echo: second"), (third, "echo: third")]

            # An event ID the channel never answered gives no backlog, as an unknown ID does.
            async with following(web, agent.handle, "support", last_event_id=new_ulid()) as unknown:
                await _post(web, agent.handle, "fourth", wait=True)
                await until(lambda: kinds(unknown, "reply"))
            assert [r.data["text"] for r in kinds(unknown, "reply")] == ["echo: fourth"]
