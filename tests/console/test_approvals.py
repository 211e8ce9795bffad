"""An action waiting for a person, decided from the console's prompt through the use case."""

from __future__ import annotations

from temporalio.client import Client

from cli.console_app.approvals import ApprovalPrompt
from cli.console_app.desk import UsecaseDesk
from schemas.approvals import ApprovalStatus
from schemas.events import Outcome
from tests.approvals.conftest import BELL, Bell, approvals_worker
from tests.console.helpers import SIZE, console, send, settled
from tests.harness import Stack, until
from usecases.approvals import list_approvals


async def _decide_from_the_console(
    client: Client, stack: Stack, key: str
) -> tuple[ApprovalPrompt, str, Bell, list[tuple[ApprovalStatus, str | None]]]:
    bell = Bell()
    async with approvals_worker(client, stack, bell=bell) as harness:
        agent = (await harness.create_agent(name="Wren")).handle
        app = console(stack, harness, agent, speaker="grace")
        app.desk = UsecaseDesk(app.session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "Please ring the bell.")
            await until(lambda: app.prompts)
            [prompt] = app.prompts.values()
            assert BELL in prompt.action.tool
            await until(lambda: app.focused is prompt)  # one key answers it
            await pilot.press(key)
            await settled(app)
            [turn] = app.transcript.turns()
            kept = await list_approvals(db=harness.db, agent=agent, every_status=True)
    assert turn.outcome is Outcome.SPOKE
    return prompt, turn.text, bell, [(a.status, a.decided_by) for a in kept]


async def test_approving_from_the_console_runs_the_tool_once(client: Client, stack: Stack) -> None:
    prompt, reply, bell, kept = await _decide_from_the_console(client, stack, "a")

    assert prompt.status == "approved" and prompt.decision is True
    assert len(bell.runs) == 1 and '"rung":1' in reply
    assert kept == [(ApprovalStatus.APPROVED, "grace")]


async def test_refusing_from_the_console_gives_the_model_the_refusal(
    client: Client, stack: Stack
) -> None:
    prompt, reply, bell, kept = await _decide_from_the_console(client, stack, "r")

    assert prompt.status == "refused" and prompt.decision is False
    # The scripted reply quotes the tool's result, which reached the model fenced; the fence
    # tags are not sent on (schemas/fences.py), the refusal is.
    assert bell.runs == [] and reply.startswith("The bell:") and "refused by" in reply
    assert "<material" not in reply
    assert kept == [(ApprovalStatus.REFUSED, "grace")]
