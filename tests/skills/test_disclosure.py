"""Progressive disclosure through a real worker: names in the prompt, instructions on demand."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from schemas.events import Outcome
from schemas.models import ModelRequest, TaskType
from tests.harness import Stack, running_worker
from tests.skills.conftest import skill_text, write_skill

INSTRUCTIONS = "STEP-ONE: warm the pot before the water boils."


def responds(requests: list[ModelRequest]) -> list[ModelRequest]:
    return [r for r in requests if r.task is TaskType.RESPOND]


async def test_the_prompt_names_skills_and_load_skill_brings_the_instructions(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    supplied = tmp_path / "supplied"
    write_skill(supplied, "brew-tea", skill_text("brew-tea", "How to brew tea well.", INSTRUCTIONS))
    skills = {"supplied_dir": str(supplied), "library_dir": str(tmp_path / "libraries")}
    rules = [
        ScriptRule(after_tool=True, reply="From the skill: {tool}"),
        ScriptRule(
            match="make tea",
            tool_calls=[ScriptToolCall(name="load_skill", arguments={"name": "brew-tea"})],
        ),
    ]
    async with running_worker(
        client, stack, rules=rules, settings_overrides={"skills": skills}
    ) as harness:
        agent = await harness.create_agent()
        receipt = await harness.say(agent.handle, "How do I make tea?")

        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE
        assert marker.text is not None and "STEP-ONE" in marker.text
        first, second = responds(harness.provider.requests)[-2:]
        # At rest: the name and description, fenced, in the stable part before the clock.
        assert "- brew-tea: How to brew tea well." in first.system
        assert INSTRUCTIONS not in first.system
        assert all(INSTRUCTIONS not in m.content for m in first.messages)
        catalogue = first.system.index("brew-tea")
        assert first.system.rfind('<material source="skills"', 0, catalogue) >= 0
        assert catalogue < first.system.index("It is ")
        assert {"load_skill", "read_skill_resource", "write_skill"} <= {t.name for t in first.tools}
        # On demand: the tool's result carries the instructions.
        assert second.messages[-1].role == "tool" and INSTRUCTIONS in second.messages[-1].content


async def test_a_skill_the_agent_writes_is_listed_on_its_next_turn(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    skills = {"library_dir": str(tmp_path / "libraries")}  # the shipped supplied skills
    new_skill = {
        "name": "greet-warmly",
        "description": "Greet people by name, warmly.",
        "instructions": "1. Use their name.",
    }
    rules = [
        ScriptRule(after_tool=True, reply="Saved: {tool}"),
        ScriptRule(
            match="remember how",
            tool_calls=[ScriptToolCall(name="write_skill", arguments=new_skill)],
        ),
        ScriptRule(match="hello", reply="Hello."),
    ]
    async with running_worker(
        client, stack, rules=rules, settings_overrides={"skills": skills}
    ) as harness:
        agent = await harness.create_agent()
        before = await harness.say(agent.handle, "Please remember how to greet people.")
        assert before.marker is not None and before.marker.text is not None
        assert '"origin":"own"' in before.marker.text
        # The shipped authoring procedure was listed all along; the new skill joins it.
        first = responds(harness.provider.requests)[0]
        assert "- authoring-skills:" in first.system and "greet-warmly" not in first.system
        assert "any skill. [protected: use it, do not change it]" in first.system

        await harness.say(agent.handle, "hello")

        last = responds(harness.provider.requests)[-1]
        assert "- greet-warmly: Greet people by name, warmly." in last.system
        assert "1. Use their name." not in last.system
