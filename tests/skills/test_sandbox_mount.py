"""A skill's runnable resources inside the agent's sandbox, and authoring skills there.

Runs on the session's private Docker engine (skipped by name without one, failing in CI).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from activities.sandbox.docker import DockerProvider
from activities.skills.library import SkillLibrary
from activities.skills.wiring import build_skills
from schemas.sandbox import SandboxSettings
from schemas.settings import Settings
from tests.harness import unique
from tests.sandbox.engine import DockerEngine

SANDBOX_UID = 65534


@pytest.fixture
async def agent() -> AsyncIterator[str]:
    yield unique("skilled")


async def sandbox(engine: DockerEngine, settings: Settings) -> DockerProvider:
    skills = build_skills(settings)
    assert skills.sandbox_mounts is not None
    return DockerProvider(
        SandboxSettings(docker_host=engine.host, image=engine.image), mounts=skills.sandbox_mounts
    )


async def test_helper_code_of_a_skill_runs_in_the_sandbox_read_only(
    docker_engine: DockerEngine, settings: Settings, supplied: Path, agent: str
) -> None:
    script = supplied / "brew-tea" / "scripts" / "steep.sh"
    script.parent.mkdir()
    script.write_text('echo "steeping in $(dirname "$0")"\n')
    provider = await sandbox(docker_engine, settings)
    try:
        ran = await provider.run(agent, "sh /skills/brew-tea/scripts/steep.sh")
        assert ran.exit_code == 0 and ran.stdout == "steeping in /skills/brew-tea/scripts\n"
        refused = await provider.run(agent, "touch /skills/brew-tea/x 2>&1; mkdir /skills/y 2>&1")
        assert refused.stdout.count("Read-only file system") == 2
    finally:
        await provider.teardown(agent)
        await provider.close()


async def test_with_write_access_the_agent_authors_a_skill_in_the_sandbox(
    docker_engine: DockerEngine, settings: Settings, agent: str
) -> None:
    writable = settings.model_copy(
        update={"skills": settings.skills.model_copy(update={"sandbox_write": True})}
    )
    library = SkillLibrary.from_settings(writable)
    # The operator hands the library to the sandbox user; the supplied copies stay the worker's.
    os.chown(library.ensure(agent), SANDBOX_UID, SANDBOX_UID)
    provider = await sandbox(docker_engine, writable)
    try:
        wrote = await provider.run(
            agent,
            "mkdir /skills/water-plants && printf -- '---\\nname: water-plants\\n"
            "description: Water the plants on Sundays.\\n---\\n1. Fill the can.\\n' "
            "> /skills/water-plants/SKILL.md && echo '# notes' > /skills/keep-safe/SKILL.md "
            "2>&1; echo done",
        )
        assert wrote.stdout.splitlines()[-1] == "done"
        assert "Permission denied" in wrote.stderr  # the protected copy is not the agent's
        found = {s.name: s for s in library.listing(agent)[0]}
        assert found["water-plants"].origin == "own"
        assert found["water-plants"].description == "Water the plants on Sundays."
        assert library.load(agent, "keep-safe").instructions == "Never change me."
    finally:
        await provider.teardown(agent)
        await provider.close()
