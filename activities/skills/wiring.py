"""The skill tools and context source, built from the settings, failing soft.

``skills_status`` says whether skills are offered and why not (``persyn tools list`` and
``persyn status`` read it); ``build_skills`` makes the tools and the prompt's skill catalogue,
restoring every library's protected skills first (worker start); ``sandbox_mount`` is what the
sandbox provider maps so a skill's helper code runs there.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from activities.skills.library import SkillLibrary
from activities.skills.source import SkillsSource
from activities.skills.tools import skill_tools
from activities.tools.registry import Tool
from schemas.settings import Settings
from schemas.skills import SkillsStatus

log = logging.getLogger(__name__)

SANDBOX_SKILLS_DIR = "/skills"
"""Where the agent's library appears inside its sandbox."""


@dataclass
class Skills:
    """What a worker registers for skills (nothing when they are unavailable)."""

    status: SkillsStatus
    tools: list[Tool] = field(default_factory=list)
    sources: list[SkillsSource] = field(default_factory=list)
    sandbox_mounts: Callable[[str], dict[str, dict[str, str]]] | None = None
    """Each agent's library as a sandbox mount (the execution provider's ``mounts``)."""


def skills_status(settings: Settings) -> SkillsStatus:
    """Whether the skill tools are available, and in one line why not."""
    if not settings.skills.enabled:
        return SkillsStatus(available=False, reason="switched off (skills.enabled = false)")
    library = SkillLibrary.from_settings(settings)
    if not library.supplied.is_dir():
        return SkillsStatus(
            available=False,
            reason=f"the supplied folder {library.supplied} is missing (skills.supplied_dir)",
        )
    try:
        library.root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return SkillsStatus(
            available=False, reason=f"cannot create the library {library.root}: {err.strerror}"
        )
    if not os.access(library.root, os.W_OK | os.X_OK):
        return SkillsStatus(
            available=False,
            reason=f"the library {library.root} is not writable (skills.library_dir)",
        )
    return SkillsStatus(available=True)


def build_skills(settings: Settings) -> Skills:
    """The skill tools and catalogue source; protected skills are restored first.

    Never raises: a problem leaves skills absent, logged in one line.
    """
    status = skills_status(settings)
    if not status.available:
        log.warning("skills absent: %s", status.reason)
        return Skills(status=status)
    library = SkillLibrary.from_settings(settings)
    try:
        for report in library.refresh_all():
            for name in report.restored:
                log.warning("protected skill %s of %s restored", name, report.agent)
    except OSError as err:
        status = SkillsStatus(available=False, reason=f"cannot refresh the library: {err}")
        log.warning("skills absent: %s", status.reason)
        return Skills(status=status)
    return Skills(
        status=status,
        tools=skill_tools(library),
        sources=[SkillsSource(library)],
        sandbox_mounts=lambda agent: sandbox_mounts(settings, agent),
    )


def sandbox_mount(settings: Settings, agent: str) -> tuple[Path, Literal["rw", "ro"]]:
    """The host folder to map at :data:`SANDBOX_SKILLS_DIR` in ``agent``'s sandbox, and its mode.

    Read-write only when ``skills.sandbox_write`` is on: then the agent can author skills with
    its sandbox file tools; its skills' runnable resources are there either way.
    """
    library = SkillLibrary.from_settings(settings).ensure(agent)
    return library, "rw" if settings.skills.sandbox_write else "ro"


def sandbox_mounts(settings: Settings, agent: str) -> dict[str, dict[str, str]]:
    """:func:`sandbox_mount` in the shape Docker's ``volumes`` takes."""
    path, mode = sandbox_mount(settings, agent)
    return {str(path): {"bind": SANDBOX_SKILLS_DIR, "mode": mode}}
