"""The skill catalogue: each skill's name and description, in the stable part of the prompt.

Progressive disclosure: only names and descriptions sit in every prompt, enough to recognise
when a skill fits; ``load_skill`` pulls in the instructions and ``read_skill_resource`` a
file, only when needed. The catalogue changes only when the library does, so it is a stable
block and the provider's cached prefix holds from turn to turn.
"""

from __future__ import annotations

import asyncio

from activities.context.fencing import Provenance
from activities.context.model import ContextBlock, ContextRequest
from activities.skills.library import SkillLibrary

SKILLS = Provenance(
    source="skills",
    origin="your skill library: skills supplied by your operator and skills you wrote",
    trust="descriptions only; load a skill to read its instructions",
)
TITLE = (
    "Skills in your library (name: what it does and when to use it). When a task matches one, "
    "call load_skill with its name to read its instructions before you start."
)

PROTECTED = " [protected: use it, do not change it]"
"""Marks a protected skill: the platform restores it anyway, but the agent is told first."""


class SkillsSource:
    """Names and descriptions of the agent's skills."""

    name = "skills"
    required = False

    def __init__(self, library: SkillLibrary) -> None:
        self._library = library

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The catalogue, or ``None`` when the library is empty."""
        found, _ = await asyncio.to_thread(self._library.listing, request.agent.handle)
        if not found:
            return None
        items = [
            f"- {skill.name}: {skill.description}{PROTECTED if skill.protected else ''}"
            for skill in found
        ]
        return ContextBlock(
            source=self.name,
            title=TITLE,
            items=items[: self._library.settings.max_listed],
            stable=True,
            order=20,
            provenance=SKILLS,
        )
