"""The tool loop through a real activation: calls, results, failures, bad input and the bound."""

from __future__ import annotations

import json
from typing import Any

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.tools.registry import Tool, ToolInput, ToolRun
from activities.tools.rounds import BOUND_NOTE
from contract import names
from schemas.events import Outcome
from schemas.models import TaskType
from tests.autonomy.conftest import activity_summaries, autonomy_worker, tool_calls
from tests.harness import Stack


def calls(*pairs: tuple[str, dict[str, Any] | str]) -> list[ScriptToolCall]:
    return [ScriptToolCall(name=name, arguments=arguments) for name, arguments in pairs]


class ExplodeInput(ToolInput):
    """Nothing."""


class Exploding(Tool):
    """A tool with a bug."""

    name = "explode"
    description = "Always fails."
    input_model = ExplodeInput

    async def run(self, call: ToolRun, args: ExplodeInput) -> str:
        raise RuntimeError("the fuse was lit")


async def test_the_model_calls_a_tool_and_answers_from_its_result(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(after_tool=True, reply="By my count: {tool}"),
        ScriptRule(match="six times seven", tool_calls=calls(("calculate", {"expression": "6*7"}))),
    ]
    async with autonomy_worker(client, stack, rules=rules) as harness:
        agent = await harness.create_agent()
        receipt = await harness.say(agent.handle, "What is six times seven?")

        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE
        assert marker.text is not None and '"value":"42"' in marker.text
        [call] = await tool_calls(harness, str(marker.activation_id))
        assert (call.name, call.arguments) == ("calculate", {"expression": "6*7"})
        assert not call.is_error
        # Each call is its own activity, named after its tool in the Web UI.
        history = await harness.client.get_workflow_handle(
            names.activation_workflow_id(str(marker.activation_id))
        ).fetch_history()
        scheduled = await activity_summaries(history, harness.client.data_converter)
        assert ("tools.invoke", "calculate") in scheduled
        assert [kind for kind, _ in scheduled].count("generation.generate") == 2
        # The model was offered the tools and saw its call's result in the second round.
        # (The decide judge may run after them: take the two rounds of the reply itself.)
        first, second = [r for r in harness.provider.requests if r.task is TaskType.RESPOND][-2:]
        assert "calculate" in [t.name for t in first.tools]
        assert second.messages[-1].role == "tool" and "42" in second.messages[-1].content


async def test_a_tool_that_raises_returns_an_error_and_the_turn_completes(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(after_tool=True, reply="That did not work: {tool}"),
        ScriptRule(match="light it", tool_calls=calls(("explode", {}))),
    ]
    async with autonomy_worker(client, stack, rules=rules, tools=[Exploding()]) as harness:
        agent = await harness.create_agent()
        receipt = await harness.say(agent.handle, "Light it.")

        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE and not marker.degraded
        assert marker.text is not None and "the fuse was lit" in marker.text
        [call] = await tool_calls(harness, str(marker.activation_id))
        assert call.is_error and "RuntimeError" in str(call.result)


async def test_bad_arguments_and_unknown_tools_come_back_as_errors(
    client: Client, stack: Stack
) -> None:
    bad = calls(
        ("calculate", '{"expression": "1+'),  # not JSON at all
        ("calculate", {"expr": "1+1"}),  # the wrong field
        ("calculate", {"expression": "9**9**9"}),  # would blow up
        ("teleport", {"to": "Mars"}),  # no such tool
    )
    rules = [
        ScriptRule(after_tool=True, reply="Noted."),
        ScriptRule(match="try everything", tool_calls=bad),
    ]
    async with autonomy_worker(client, stack, rules=rules) as harness:
        agent = await harness.create_agent()
        receipt = await harness.say(agent.handle, "Try everything.")

        assert receipt.marker is not None and receipt.marker.text == "Noted."
        rows = await tool_calls(harness, str(receipt.marker.activation_id))
        errors = [json.loads(str(row.result))["error"] for row in rows]
        assert all(row.is_error for row in rows)
        assert "not a JSON object" in errors[0]
        assert "expression: Field required" in errors[1] and "expr: Extra inputs" in errors[1]
        assert "digits" in errors[2]
        assert "no tool named 'teleport'" in errors[3] and "calculate" in errors[3]


async def test_the_tool_loop_stops_at_its_bound(client: Client, stack: Stack) -> None:
    rules = [
        # On the last round the model is told it has used every tool round.
        ScriptRule(match="every tool round", reply="I stopped counting."),
        ScriptRule(
            match="count forever",
            reply="Counting...",
            tool_calls=calls(("calculate", {"expression": "1+1"})),
        ),
    ]
    async with autonomy_worker(
        client, stack, rules=rules, autonomy={"max_tool_rounds": 2}
    ) as harness:
        agent = await harness.create_agent()
        receipt = await harness.say(agent.handle, "Count forever.")

        assert receipt.marker is not None and receipt.marker.text == "I stopped counting."
        rows = await tool_calls(harness, str(receipt.marker.activation_id))
        assert [row.round for row in rows] == [0, 1]
        requests = harness.provider.requests[-3:]
        assert [r.tool_choice for r in requests] == ["auto", "auto", "none"]
        assert BOUND_NOTE in requests[-1].messages[-1].content
