"""Shredding an agent: what it leaves anywhere becomes unreadable or is removed.

Its payload keys are destroyed (Temporal's histories of it can no longer be read), its sandbox
environment (container and per-agent volume) is torn down, its skill library, with every
skill it wrote for itself, is deleted, and so are the pictures and recordings kept for it (those
people sent, with what was seen or heard of them, and its renders). The agent's record stays:
a later turn or sandbox task starts afresh, with a new key, an empty work directory and only
the supplied skills.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path

from activities.sandbox.factory import teardown_environment
from activities.skills.library import SkillLibrary
from schemas.ids import check_handle
from schemas.settings import Settings
from temporal.client import keyring
from usecases.agents import find_agent
from usecases.errors import UnknownAgentError


@dataclass(frozen=True)
class ShredReport:
    """What a shred did."""

    keys: int
    """Payload keys destroyed now (0 when they were shredded before)."""
    sandbox_left: str | None
    """Why the sandbox environment could not be removed, or None when it is gone."""
    skills_removed: bool
    """Whether there was a skill library to delete."""
    media_removed: bool = False
    """Whether there were pictures or recordings kept for it to delete."""


async def shred_agent(*, settings: Settings, handle: str) -> ShredReport:
    """Destroy the agent's keys, tear down its sandbox environment, delete its skill library.

    Idempotent: run it again after a failure (an engine that did not answer) to finish.
    Shred an agent after terminating its runs: a sandbox task still running would provision
    a fresh environment.

    Raises:
        UnknownAgentError: no such agent.
    """
    check_handle(handle)
    if await find_agent(settings=settings, handle=handle) is None:
        raise UnknownAgentError(handle)
    keys = await keyring(settings).shred(handle)
    left = await teardown_environment(settings.sandbox, handle)
    library = SkillLibrary.from_settings(settings)
    removed = await asyncio.to_thread(library.remove, handle)
    media = await asyncio.to_thread(_remove_media, settings.home, handle)
    return ShredReport(keys=keys, sandbox_left=left, skills_removed=removed, media_removed=media)


def _remove_media(home: Path, handle: str) -> bool:
    """Delete the agent's folders of pictures and recordings; whether there were any."""
    found = False
    for folder in (home / "images" / handle, home / "audio" / handle):
        if folder.is_dir():
            shutil.rmtree(folder)
            found = True
    return found
