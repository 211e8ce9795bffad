"""A skill's tools wait for approval when persyn.toml marks them, like built-in and MCP tools.

Skills offer the agent three tools (``load_skill``, ``read_skill_resource``, ``write_skill``);
rules name them, or match them with a pattern, per deployment and per agent.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.skills.library import SkillLibrary
from schemas.approvals import ApprovalStatus
from schemas.events import Outcome
from schemas.settings import Settings
from tests.approvals.conftest import AFTER_TOOL, Bell, approvals_worker, saying, waiting
from tests.harness import Stack, unique
from tests.skills.conftest import skill_text, write_skill
from usecases import approvals

INSTRUCTIONS = "STEP-ONE: warm the pot before the water boils."
NEW_SKILL = {
    "name": "greet-warmly",
    "description": "Greet people by name, warmly.",
    "instructions": "1. Use their name.",
}
RULES = [
    AFTER_TOOL,
    ScriptRule(
        task="respond",
        match="make tea",
        after_tool=False,
        tool_calls=[ScriptToolCall(name="load_skill", arguments={"name": "brew-tea"})],
    ),
    ScriptRule(
        task="respond",
        match="remember how",
        after_tool=False,
        tool_calls=[ScriptToolCall(name="write_skill", arguments=NEW_SKILL)],
    ),
]


def _skills(tmp_path: Path) -> dict[str, str]:
    """Skills from a supplied folder holding ``brew-tea``, into libraries under ``tmp_path``."""
    supplied = tmp_path / "supplied"
    write_skill(supplied, "brew-tea", skill_text("brew-tea", "How to brew tea well.", INSTRUCTIONS))
    return {"supplied_dir": str(supplied), "library_dir": str(tmp_path / "libraries")}


async def test_a_skill_tool_a_rule_marks_waits_and_an_agents_own_rule_wins(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    trusted = unique("agent")
    settings = {
        "new_contacts": False,
        "tools": {"*_skill": "always"},
        "agents": {trusted: {"tools": {"load_skill": "never"}}},
    }
    async with approvals_worker(
        client,
        stack,
        bell=Bell(),
        approvals=settings,
        rules=RULES,
        overrides={"skills": _skills(tmp_path)},
    ) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent, "How do I make tea?")
        [asked] = await waiting(harness, agent)
        assert (asked.tool, asked.reason) == ("load_skill", "load_skill always needs approval")
        await approvals.decide_approval(
            db=harness.db, client=client, approval_id=asked.approval_id, approve=True, by="Grace"
        )
        receipt = await said
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        assert receipt.marker.text is not None and "STEP-ONE" in receipt.marker.text

        # The trusted agent's own "never" wins over the deployment's pattern: no wait.
        await harness.create_agent(trusted)
        receipt = await harness.say(trusted, "How do I make tea?")
        assert receipt.marker is not None and receipt.marker.text is not None
        assert "STEP-ONE" in receipt.marker.text
        assert await approvals.list_approvals(db=harness.db, agent=trusted, every_status=True) == []


async def test_a_refused_write_skill_writes_nothing_and_the_model_reads_why(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    skills = _skills(tmp_path)
    async with approvals_worker(
        client,
        stack,
        bell=Bell(),
        approvals={"tools": {"write_skill": "always"}},
        rules=RULES,
        overrides={"skills": skills},
    ) as harness:
        agent = (await harness.create_agent()).handle
        # load_skill has no rule: it runs at once.
        receipt = await harness.say(agent, "How do I make tea?")
        assert receipt.marker is not None and "STEP-ONE" in str(receipt.marker.text)
        assert await approvals.list_approvals(db=harness.db, agent=agent, every_status=True) == []

        said = saying(harness, agent, "Please remember how to greet people.")
        [asked] = await waiting(harness, agent)
        assert asked.tool == "write_skill" and '"name": "greet-warmly"' in asked.arguments
        await approvals.decide_approval(
            db=harness.db,
            client=client,
            approval_id=asked.approval_id,
            approve=False,
            by="Grace",
            why="I write the skills",
        )
        receipt = await said
        assert receipt.marker is not None and receipt.marker.text is not None
        assert "refused by Grace: I write the skills" in receipt.marker.text
        [kept] = await approvals.list_approvals(db=harness.db, agent=agent, every_status=True)
        assert kept.status is ApprovalStatus.REFUSED
        library = SkillLibrary.from_settings(Settings(home=stack.home, skills=skills))
        assert library.folder(agent).is_dir()  # made on the agent's first turn...
        assert not (library.folder(agent) / "greet-warmly").exists()  # ...without the refused
