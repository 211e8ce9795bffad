"""Hostile input at every door of approvals: the update, the use case, the CLI and the web API.

Whatever arrives, the answer is a one-line refusal (or the recorded decision), the activation
keeps waiting without a failed workflow task, and the tool runs only once someone approves.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError
from typer.testing import CliRunner

from cli.main import app
from contract import names
from schemas.approvals import PendingApproval
from schemas.events import Receipt
from schemas.ids import InvalidIdError, new_ulid
from schemas.settings import get_settings
from schemas.text import InvalidTextError
from tests.approvals.conftest import Bell, approvals_worker, saying, waiting
from tests.harness import Harness, Stack
from tests.schemas.test_hostile_text import hostile_text, json_values
from tests.webchannel.web import Served, serving
from tests.workflows.test_handler_boundary import task_failures
from usecases import approvals
from usecases.errors import UseCaseError

FEW = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

ids = st.one_of(hostile_text, st.builds(lambda: new_ulid()), st.just("01JAAAAAAAAAAAAAAAAAAAAAAA"))
"""What a caller may pass as an approval ID: anything, or a well-formed ID of nothing."""


@dataclass
class Waiting:
    """An activation waiting for approval of one bell ring."""

    harness: Harness
    bell: Bell
    asked: PendingApproval
    said: asyncio.Task[Receipt]

    @property
    def activation(self) -> WorkflowHandle[Any, Any]:
        return self.harness.client.get_workflow_handle(
            names.activation_workflow_id(self.asked.activation_id)
        )

    async def still_waits(self) -> None:
        """Nothing ran, nothing failed, and the approval still waits."""
        assert self.bell.runs == [] and not self.said.done()
        [found] = await approvals.list_approvals(db=self.harness.db, agent=self.asked.agent)
        assert found.approval_id == self.asked.approval_id
        assert await task_failures(self.harness.client, self.activation.id) == 0

    async def approve_at_last(self) -> None:
        """A real decision still goes through, and the tool runs once."""
        await approvals.decide_approval(
            db=self.harness.db,
            client=self.harness.client,
            approval_id=self.asked.approval_id,
            approve=True,
            by="Grace",
        )
        await self.said
        assert len(self.bell.runs) == 1


@pytest.fixture
async def pending(client: Client, stack: Stack) -> AsyncIterator[Waiting]:
    bell = Bell()
    async with approvals_worker(client, stack, bell=bell) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
        found = Waiting(harness=harness, bell=bell, asked=asked, said=said)
        yield found
        if not said.done():
            await found.approve_at_last()


def raw(value: Any) -> RawValue:
    """A payload as a client in another language may send it (escaped JSON)."""
    data = json.dumps(value, ensure_ascii=True).encode()
    return RawValue(Payload(metadata={"encoding": b"json/plain"}, data=data))


payloads = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"approval_id": ids, "approve": json_values, "by": hostile_text},
        optional={"why": hostile_text, "agent": hostile_text, "extra": json_values},
    ),
)


@FEW
@given(payload=payloads)
async def test_any_update_payload_is_refused_in_one_line(
    pending: Waiting, payload: dict[str, Any]
) -> None:
    with pytest.raises(WorkflowUpdateFailedError) as caught:
        await pending.activation.execute_update(names.DECIDE_APPROVAL, raw(payload), id=new_ulid())
    cause = caught.value.cause
    assert isinstance(cause, ApplicationError) and cause.non_retryable
    assert cause.type in ("InvalidInput", "DecisionRefused")
    assert "\n" not in cause.message
    await pending.still_waits()


@FEW
@given(approval_id=ids, by=hostile_text, why=st.none() | hostile_text)
async def test_any_use_case_input_is_refused_in_one_line(
    pending: Waiting, approval_id: str, by: str, why: str | None
) -> None:
    with pytest.raises((UseCaseError, InvalidIdError, InvalidTextError)) as caught:
        await approvals.decide_approval(
            db=pending.harness.db,
            client=pending.harness.client,
            approval_id=approval_id,
            approve=False,
            by=by,
            why=why,
        )
    assert "\n" not in str(caught.value)
    await pending.still_waits()


@FEW
@given(by=hostile_text.filter(lambda text: text.strip() == "" or "\x00" in text))
async def test_a_bad_name_on_the_real_approval_changes_nothing(pending: Waiting, by: str) -> None:
    with pytest.raises(InvalidTextError):
        await approvals.decide_approval(
            db=pending.harness.db,
            client=pending.harness.client,
            approval_id=pending.asked.approval_id,
            approve=False,
            by=by,
        )
    await pending.still_waits()


runner = CliRunner()


@pytest.fixture
def deployment(stack: Stack, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The CLI's settings name the test's stack."""
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    monkeypatch.setenv("PERSYN_TEMPORAL_ADDRESS", stack.temporal_address)
    monkeypatch.setenv("PERSYN_EMBEDDED", "false")
    get_settings.cache_clear()


def cli(*args: str) -> Any:
    """``persyn ARGS`` in a thread of its own (the CLI runs its own event loop)."""
    return asyncio.to_thread(runner.invoke, app, list(args))


async def test_the_cli_lists_refuses_and_says_what_is_wrong(
    pending: Waiting, deployment: None
) -> None:
    listed = await cli("approvals", "list", "--agent", pending.asked.agent)
    assert listed.exit_code == 0, listed.output
    assert pending.asked.approval_id in listed.stdout and "ring_bell" in listed.stdout

    refused = await cli(
        "approvals", "refuse", pending.asked.approval_id, "--by", "Grace", "--why", "not now"
    )
    assert refused.exit_code == 0, refused.output
    assert refused.stdout.strip() == (
        f"refused {pending.asked.approval_id} (ring_bell) by Grace: not now"
    )
    receipt = await pending.said
    assert receipt.marker is not None and "refused by Grace: not now" in str(receipt.marker.text)

    late = await cli("approvals", "approve", pending.asked.approval_id)
    assert late.exit_code == 1
    [line] = late.stderr.splitlines()
    assert line.startswith("error: ") and "already refused by Grace" in line
    again = await cli("approvals", "refuse", pending.asked.approval_id, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["decided_by"] == "Grace"
    assert pending.bell.runs == []
    nobody = await cli("approvals", "list", "--agent", "nobody-here")
    assert nobody.exit_code == 1
    assert nobody.stderr.strip() == (
        "error: there is no agent 'nobody-here': see `persyn agent list`"
    )


@FEW
@given(approval_id=hostile_text, by=hostile_text, why=hostile_text)
async def test_any_cli_input_is_refused_in_one_line(
    pending: Waiting, deployment: None, approval_id: str, by: str, why: str
) -> None:
    if "\x00" in approval_id + by + why:
        return  # no process can be given a NUL in its arguments
    result = await cli("approvals", "refuse", "--by", by, "--why", why, "--", approval_id)
    assert result.exit_code in (1, 2), result.output
    if result.exit_code == 1:
        [line] = result.stderr.splitlines()
        assert line.startswith("error: ")
    await pending.still_waits()


@pytest.fixture
async def web(pending: Waiting, stack: Stack, tmp_path: Path) -> AsyncIterator[Served]:
    settings_ = stack.settings(home=tmp_path, task_queue=pending.harness.task_queue)
    async with serving(settings_, pending.harness.client, messages_per_minute=0) as served:
        yield served


@FEW
@given(body=json_values)
async def test_any_web_body_is_refused_in_one_line(
    pending: Waiting, web: Served, body: Any
) -> None:
    url = f"/v1/agents/{pending.asked.agent}/approvals/{pending.asked.approval_id}"
    async with web.http() as http:
        answer = await http.post(url, content=json.dumps(body, ensure_ascii=True))
    # The approval was asked on a terminal channel: no web token ever sees it.
    assert answer.status_code in (400, 404, 413, 422), answer.text
    assert "\n" not in answer.json()["detail"]
    await pending.still_waits()
