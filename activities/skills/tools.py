"""The skill tools: load a skill's instructions, read one of its resources, write a skill.

Progressive disclosure: the prompt names each skill with its description; these tools bring in
the rest only when the agent asks. ``write_skill`` checks the front matter a reader would, so
the agent can author skills without the sandbox.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from activities.skills.library import SkillError, SkillLibrary
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.skills import SkillSummary

_NAME = "The skill's name, as listed in your prompt."


class LoadSkillInput(ToolInput):
    """Input of ``load_skill``."""

    name: str = Field(description=_NAME)


class LoadedSkill(BaseModel):
    """A skill's instructions and the resources it can read."""

    name: str
    description: str
    instructions: str
    resources: list[str] = Field(description="Files to read with read_skill_resource.")
    truncated: bool = False


class _SkillTool(Tool):
    def __init__(self, library: SkillLibrary) -> None:
        self._library = library


class LoadSkill(_SkillTool):
    """Read a skill's full instructions."""

    name = "load_skill"
    description = (
        "Read the full instructions of one of the skills listed in your prompt, when a task "
        "matches it; also lists the skill's resource files."
    )
    input_model = LoadSkillInput
    output_model = LoadedSkill

    async def run(self, call: ToolRun, args: LoadSkillInput) -> LoadedSkill:
        """Load it."""
        agent = call.context.agent
        try:
            skill = await asyncio.to_thread(self._library.load, agent, args.name)
            folder = self._library.folder(agent) / skill.name
            resources = await asyncio.to_thread(self._library.resources, folder)
        except SkillError as err:
            raise ToolError(str(err)) from None
        cap = self._library.settings.max_instructions_chars
        text = skill.instructions
        return LoadedSkill(
            name=skill.name,
            description=skill.description,
            instructions=text[:cap]
            + ("\n[... cut: the instructions go on ...]" if len(text) > cap else ""),
            resources=resources,
            truncated=len(text) > cap,
        )


class ReadSkillResourceInput(ToolInput):
    """Input of ``read_skill_resource``."""

    name: str = Field(description=_NAME)
    path: str = Field(description="The resource's path inside the skill, as load_skill lists it.")


class ReadSkillResource(_SkillTool):
    """Read one file of a skill."""

    name = "read_skill_resource"
    description = (
        "Read one resource file of a skill (reference, template or helper code), when its "
        "instructions call for it."
    )
    input_model = ReadSkillResourceInput

    async def run(self, call: ToolRun, args: ReadSkillResourceInput) -> dict[str, str]:
        """Read it."""
        try:
            text = await asyncio.to_thread(
                self._library.resource, call.context.agent, args.name, args.path
            )
        except SkillError as err:
            raise ToolError(str(err)) from None
        return {"path": args.path, "content": text}


class WriteSkillInput(ToolInput):
    """Input of ``write_skill``."""

    name: str = Field(description="Lowercase letters, digits and hyphens, e.g. 'tidy-csv'.")
    description: str = Field(
        description="What the skill does and when to use it (one or two lines)."
    )
    instructions: str = Field(description="The procedure, in Markdown.")
    resources: dict[str, str] = Field(
        default_factory=dict,
        description="Optional files beside the instructions: relative path to text content.",
    )


class WriteSkill(_SkillTool):
    """Write one of the agent's own skills."""

    name = "write_skill"
    description = (
        "Save a procedure you keep repeating as a skill in your library (new, or replacing one "
        "of yours); load the authoring-skills skill first. Protected skills cannot be replaced."
    )
    input_model = WriteSkillInput
    output_model = SkillSummary

    async def run(self, call: ToolRun, args: WriteSkillInput) -> SkillSummary:
        """Write it."""
        try:
            return await asyncio.to_thread(
                lambda: self._library.write(
                    call.context.agent,
                    name=args.name,
                    description=args.description,
                    instructions=args.instructions,
                    resources=args.resources,
                )
            )
        except SkillError as err:
            raise ToolError(str(err)) from None


def skill_tools(library: SkillLibrary) -> list[Tool]:
    """The skill tools over ``library``."""
    return [LoadSkill(library), ReadSkillResource(library), WriteSkill(library)]
