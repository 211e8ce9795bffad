"""The web API's approvals: a token sees and decides only those asked on its own channels.

Tokens ``crm`` and ``helpdesk`` both use one agent. A call asked on crm's channel is listed to
crm (under the channel name crm used) and decided by crm; helpdesk is told no such approval
exists, whether it lists, approves or refuses. Real Temporal, PostgreSQL, worker and uvicorn.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from schemas.ids import new_ulid
from tests.approvals.conftest import Bell, approvals_worker
from tests.harness import Stack, until
from tests.webchannel.web import Served, serving
from usecases.tokens import create_token


async def test_a_token_sees_and_decides_only_its_own_channels_approvals(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    bell = Bell()
    async with approvals_worker(client, stack, bell=bell) as worker:
        handle = (await worker.create_agent()).handle
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        async with serving(settings, client, messages_per_minute=0) as web:
            _, crm_plain = await create_token(settings=settings, name="crm", agents=[handle])
            _, help_plain = await create_token(settings=settings, name="helpdesk", agents=[handle])
            crm, helpdesk = Served(web.base_url, crm_plain), Served(web.base_url, help_plain)
            listing = f"/v1/agents/{handle}/approvals"

            async with crm.http() as http:
                posted = await http.post(
                    f"/v1/agents/{handle}/messages",
                    json={
                        "event_id": new_ulid(),
                        "channel": "support",
                        "speaker": {"speaker_id": "u-17", "display_name": "Ada"},
                        "text": "Please ring the bell.",
                    },
                )
                assert posted.status_code == 202, posted.text
                found: list[dict[str, object]] = []

                async def asked() -> bool:
                    found[:] = (await http.get(listing)).json()
                    return bool(found)

                await until(asked)
            [item] = found
            approval_id = str(item["approval_id"])
            # Named as crm named it: the tenant prefix stays inside the service.
            assert (item["channel"], item["tool"]) == ("support", "ring_bell")

            async with helpdesk.http() as http:
                assert (await http.get(listing)).json() == []
                for approve in (True, False):
                    answer = await http.post(
                        f"{listing}/{approval_id}", json={"approve": approve, "by": "Mallory"}
                    )
                    assert answer.status_code == 404
                    assert answer.json()["detail"] == (
                        f"there is no approval {approval_id} waiting on your channels"
                    )
            assert bell.runs == []

            async with crm.http() as http:
                decided = await http.post(
                    f"{listing}/{approval_id}", json={"approve": True, "why": "ok by me"}
                )
                assert decided.status_code == 200, decided.text
                body = decided.json()
                assert (body["status"], body["decided_by"], body["why"]) == (
                    "approved",
                    "crm",
                    "ok by me",
                )
                again = await http.post(f"{listing}/{approval_id}", json={"approve": True})
                assert again.json() == body
                other_way = await http.post(f"{listing}/{approval_id}", json={"approve": False})
                assert other_way.status_code == 409
                assert "already approved by crm" in other_way.json()["detail"]
                assert (await http.get(listing)).json() == []

            async def rung() -> bool:
                return len(bell.runs) == 1

            await until(rung)
