"""The skill tools: what the model gets back, and each refusal as an error it can read."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from activities.skills.library import SkillLibrary
from activities.skills.tools import (
    LoadSkill,
    LoadSkillInput,
    ReadSkillResource,
    ReadSkillResourceInput,
    WriteSkill,
    WriteSkillInput,
)
from activities.tools.registry import ToolError, ToolRun
from schemas.ids import new_ulid
from schemas.settings import Settings
from schemas.tools import ToolContext
from tests.harness import terminal
from tests.skills.conftest import skill_text, write_skill


def call(agent: str = "ada") -> ToolRun:
    context = ToolContext(
        agent=agent,
        activation_id=new_ulid(),
        conversation_id=new_ulid(),
        channel=terminal(),
        person_id=new_ulid(),
    )
    return ToolRun(context=context, now=datetime.now(UTC))


async def test_load_skill_lists_resources_and_cuts_long_instructions(
    settings: Settings, supplied: Path
) -> None:
    write_skill(supplied, "long-one", skill_text("long-one", "Long.", "word " * 1000))
    capped = settings.model_copy(
        update={"skills": settings.skills.model_copy(update={"max_instructions_chars": 500})}
    )
    library = SkillLibrary.from_settings(capped)
    loaded = await LoadSkill(library).run(call(), LoadSkillInput(name="keep-safe"))
    assert (loaded.instructions, loaded.resources, loaded.truncated) == (
        "Never change me.",
        ["notes.md"],
        False,
    )
    long = await LoadSkill(library).run(call(), LoadSkillInput(name="long-one"))
    assert long.truncated and long.instructions.endswith("[... cut: the instructions go on ...]")
    assert len(long.instructions) < 600


async def test_refusals_come_back_as_tool_errors(library: SkillLibrary) -> None:
    with pytest.raises(ToolError, match="no skill named 'nope'; your skills: brew-tea, keep-safe"):
        await LoadSkill(library).run(call(), LoadSkillInput(name="nope"))
    with pytest.raises(ToolError, match="lowercase letters"):
        await LoadSkill(library).run(call(), LoadSkillInput(name="../../etc"))
    with pytest.raises(ToolError, match="stay inside"):
        await ReadSkillResource(library).run(
            call(), ReadSkillResourceInput(name="keep-safe", path="../brew-tea/SKILL.md")
        )
    with pytest.raises(ToolError, match="protected"):
        await WriteSkill(library).run(
            call(), WriteSkillInput(name="keep-safe", description="Mine.", instructions="x")
        )


async def test_each_agent_reads_and_writes_only_its_own_library(library: SkillLibrary) -> None:
    args = WriteSkillInput(
        name="secret-recipe", description="Only mine.", instructions="1. Stir.", resources={}
    )
    written = await WriteSkill(library).run(call("ada"), args)
    assert written.origin == "own"
    text = await ReadSkillResource(library).run(
        call("ada"), ReadSkillResourceInput(name="keep-safe", path="notes.md")
    )
    assert text == {"path": "notes.md", "content": "original notes"}
    with pytest.raises(ToolError, match="no skill named 'secret-recipe'"):
        await LoadSkill(library).run(call("bob"), LoadSkillInput(name="secret-recipe"))
