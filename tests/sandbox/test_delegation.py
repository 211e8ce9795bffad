"""Delegated code execution: ``run_code`` starts a ``SandboxTaskWorkflow`` in a real engine.

The model is scripted; the sandbox is the session's private Docker engine (skipped by name
without one, a failure under ``PERSYN_REQUIRE_DOCKER=1``).
"""

from __future__ import annotations

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.sandbox.provider import SandboxConfigError
from activities.tools.builtin.code import TOOL_NAME, code_tools, code_tools_availability
from activities.tools.builtin.deps import ToolDeps
from contract import names
from schemas.events import Outcome
from schemas.models import TaskType
from schemas.sandbox_task import SandboxReport, SandboxTaskBounds
from tests.autonomy.conftest import tool_calls
from tests.harness import Stack, terminal
from tests.observability.fakes import RecordingMeter
from tests.sandbox.delegation import new_agent, run_task, sandbox_rules, sandbox_worker, unprompted
from tests.sandbox.engine import DockerEngine


async def test_a_task_writes_a_file_runs_it_and_reports_to_the_conversation(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    meter = RecordingMeter()
    rules = [
        *sandbox_rules(),
        ScriptRule(task="respond", after_tool=True, reply="I started it."),
        ScriptRule(
            task="respond",
            match="six times seven",
            tool_calls=[
                ScriptToolCall(name=TOOL_NAME, arguments={"task": "Compute six times seven."})
            ],
        ),
        ScriptRule(task="respond", match="what came of it", reply="You said: {last}"),
    ]
    async with sandbox_worker(client, stack, docker_engine, rules=rules, meters=[meter]) as h:
        agent = await new_agent(h)
        receipt = await h.say(agent, "Please work out six times seven in your sandbox.")

        # The turn only waited for the start: the reply acknowledges, the task runs on.
        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE
        assert marker.text == "I started it."
        [call] = await tool_calls(h, str(marker.activation_id))
        assert call.name == TOOL_NAME and not call.is_error
        task = client.get_workflow_handle(
            names.sandbox_task_workflow_id(call.id), result_type=SandboxReport
        )
        report = await task.result()
        assert (report.status, report.text, report.steps) == ("done", "The script printed 42.", 2)

        # The report reached the conversation as an unprompted message, exactly once.
        [sent] = await unprompted(h, agent)
        assert "The script printed 42." in sent.text and sent.channel_key == terminal().key

        # The delegated model's calls are metered under their own stage, for the activation.
        sandbox_calls = [r for r in meter.records if r.stage == TaskType.SANDBOX.value]
        assert len(sandbox_calls) == 3
        assert {r.activation for r in sandbox_calls} == {str(marker.activation_id)}
        assert {r.agent for r in sandbox_calls} == {agent}

        # Visible in the Web UI: a summary and the agent's search attribute.
        described = await task.describe()
        assert described.typed_search_attributes.get(names.AGENT) == agent
        assert "sandbox task" in (await described.static_summary() or "")

        # The agent's next turn reads the report.
        await h.say(agent, "So, what came of it?")
        latest = [r for r in h.provider.requests if r.task is TaskType.RESPOND][-1]
        prompt = latest.system + "\n".join(m.content for m in latest.messages)
        assert "The script printed 42." in prompt


async def test_malformed_arguments_are_read_by_the_model_and_the_task_goes_on(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    rules = [
        ScriptRule(task="sandbox", tool_match="no tool named", reply="Gave up politely."),
        ScriptRule(
            task="sandbox",
            tool_match="invalid arguments",
            tool_calls=[ScriptToolCall(name="format_disk", arguments={})],
        ),
        ScriptRule(
            task="sandbox",
            tool_match="not a JSON object",
            tool_calls=[ScriptToolCall(name="write_file", arguments={"path": 7})],
        ),
        ScriptRule(
            task="sandbox",
            after_tool=False,
            tool_calls=[ScriptToolCall(name="run_command", arguments='{"command": "ls"')],
        ),
        ScriptRule(task="respond", after_tool=True, reply="Refused: {tool}"),
        ScriptRule(
            task="respond",
            match="odd",
            tool_calls=[ScriptToolCall(name=TOOL_NAME, arguments={"objective": "oops"})],
        ),
    ]
    async with sandbox_worker(client, stack, docker_engine, rules=rules) as h:
        agent = await new_agent(h)
        report = await run_task(h, agent, "break things")
        assert (report.status, report.text, report.steps) == ("done", "Gave up politely.", 3)
        errors = [
            m.messages[-1]
            for m in h.provider.requests
            if m.task is TaskType.SANDBOX and m.messages[-1].role == "tool"
        ]
        assert [m.is_error for m in errors] == [True, True, True]

        # The agent's own tool refuses a call without a task, naming what to send.
        receipt = await h.say(agent, "run something odd")
        assert receipt.marker is not None and receipt.marker.text is not None
        assert "invalid arguments" in receipt.marker.text and "task" in receipt.marker.text


async def test_a_task_stops_at_its_round_bound_and_long_output_is_cut(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    rules = [
        ScriptRule(
            task="sandbox",
            reply="Still going.",
            tool_calls=[
                ScriptToolCall(name="run_command", arguments={"command": "yes x | head -c 20000"})
            ],
        )
    ]
    async with sandbox_worker(client, stack, docker_engine, rules=rules) as h:
        agent = await new_agent(h)
        bounds = SandboxTaskBounds(max_rounds=3, max_output_chars=300)
        report = await run_task(h, agent, "never stop", bounds)
        assert (report.status, report.rounds, report.steps) == ("out_of_rounds", 3, 2)
        assert report.text == "Still going."
        sandbox = [r for r in h.provider.requests if r.task is TaskType.SANDBOX]
        # The last round is asked for words only; every result the model read was cut.
        assert [r.tool_choice for r in sandbox] == ["auto", "auto", "none"]
        results = [m for m in sandbox[-1].messages if m.role == "tool"]
        assert len(results) == 2
        assert all(len(m.content) < 400 and "characters cut" in m.content for m in results)


async def test_with_no_engine_the_tool_is_absent_with_a_one_line_reason(stack: Stack) -> None:
    settings = stack.settings(sandbox={"docker_host": "unix:///nonexistent/docker.sock"})
    availability = await code_tools_availability(settings)
    assert not availability.available
    assert "sandbox.docker_host" in availability.reason and "\n" not in availability.reason

    # With a client but no engine, the registry is built without the tool (and without a crash).
    deps = ToolDeps(db=None, settings=settings, models=None, client=object())  # type: ignore[arg-type]
    assert code_tools(deps) == []


async def test_an_unknown_network_stops_the_worker_from_starting(
    stack: Stack, docker_engine: DockerEngine
) -> None:
    # With an engine that answers, a network it lacks is a startup error naming the setting,
    # never a quietly missing tool (and never a fall-open to another network).
    settings = stack.settings(
        sandbox={
            "docker_host": docker_engine.host,
            "image": docker_engine.image,
            "network": "no-such-network",
        }
    )
    deps = ToolDeps(db=None, settings=settings, models=None, client=object())  # type: ignore[arg-type]
    with pytest.raises(SandboxConfigError, match=r"sandbox\.network 'no-such-network'"):
        code_tools(deps)
