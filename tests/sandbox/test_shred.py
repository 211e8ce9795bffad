"""Shredding an agent tears down its sandbox environment and deletes its skill library.

Runs on the session's private Docker engine and the real PostgreSQL: after the shred the
container and the volume are gone from the engine, and the same handle's next sandbox starts
with an empty work directory and a library of the supplied skills alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import docker
import pytest
from docker.errors import NotFound

from activities.sandbox.docker import DockerProvider
from activities.sandbox.paths import resource_name
from activities.skills.library import SkillLibrary
from activities.skills.wiring import build_skills
from schemas.sandbox import SandboxSettings
from schemas.settings import Settings
from schemas.skills import SkillSettings
from store.db import Database
from tests.harness import Stack, unique
from tests.memory.recall.records import new_agent
from tests.sandbox.engine import DockerEngine
from usecases.errors import UnknownAgentError
from usecases.shred import shred_agent


@pytest.fixture
async def db(stack: Stack) -> AsyncIterator[Database]:
    database = Database(stack.dsn, pool_size=2)
    yield database
    await database.aclose()


def _settings(stack: Stack, engine: DockerEngine, tmp_path: Path, **sandbox: object) -> Settings:
    return stack.settings(
        home=tmp_path / "home",
        sandbox=SandboxSettings.model_validate(
            {"docker_host": engine.host, "image": engine.image, **sandbox}
        ),
        skills=SkillSettings(library_dir=tmp_path / "skills"),
    )


def _provider(settings: Settings) -> DockerProvider:
    skills = build_skills(settings)
    return DockerProvider(settings.sandbox, mounts=skills.sandbox_mounts)


def _engine_has(engine: DockerEngine, name: str) -> tuple[bool, bool]:
    client = docker.DockerClient(base_url=engine.host)
    try:
        found = []
        for collection in (client.containers, client.volumes):
            try:
                collection.get(name)
                found.append(True)
            except NotFound:
                found.append(False)
        return found[0], found[1]
    finally:
        client.close()


async def test_a_shredded_agent_starts_again_with_an_empty_environment(
    stack: Stack, db: Database, docker_engine: DockerEngine, tmp_path: Path
) -> None:
    settings = _settings(stack, docker_engine, tmp_path)
    agent = await new_agent(db, "shredded")
    library = SkillLibrary.from_settings(settings)
    provider = _provider(settings)
    try:
        await provider.write_file(agent, "diary.txt", b"what I did today")
        library.write(
            agent,
            name="my-habit",
            description="Something I do.",
            instructions="Do it.",
            resources={},
        )
        assert _engine_has(docker_engine, resource_name(agent)) == (True, True)

        report = await shred_agent(settings=settings, handle=agent)

        assert report.sandbox_left is None and report.skills_removed
        assert _engine_has(docker_engine, resource_name(agent)) == (False, False)
        assert not library.folder(agent).exists()

        # The same handle's next task provisions afresh: no file, no self-authored skill.
        listed = await provider.run(agent, "ls -A /work; ls /skills")
        work_and_skills = listed.stdout.split()
        assert "diary.txt" not in work_and_skills and "my-habit" not in work_and_skills
        assert await provider.list_files(agent) == []
        names = {skill.name for skill in library.listing(agent)[0]}
        assert names == set(library.supplied_skills()) and "my-habit" not in names

        again = await shred_agent(settings=settings, handle=agent)  # idempotent
        assert again.keys == 0 and again.sandbox_left is None
    finally:
        await provider.teardown(agent)
        await provider.close()


async def test_an_unreachable_engine_is_reported_and_the_library_still_goes(
    stack: Stack, db: Database, docker_engine: DockerEngine, tmp_path: Path
) -> None:
    settings = _settings(
        stack, docker_engine, tmp_path, docker_host=f"unix://{tmp_path}/no-engine.sock"
    )
    agent = await new_agent(db, "noengine")
    SkillLibrary.from_settings(settings).ensure(agent)

    report = await shred_agent(settings=settings, handle=agent)

    assert report.sandbox_left is not None and "no Docker engine answers" in report.sandbox_left
    assert report.skills_removed


async def test_an_unknown_agent_is_refused_before_anything_is_removed(
    stack: Stack, docker_engine: DockerEngine, tmp_path: Path
) -> None:
    settings = _settings(stack, docker_engine, tmp_path)
    nobody = unique("nobody")
    with pytest.raises(UnknownAgentError, match=nobody):
        await shred_agent(settings=settings, handle=nobody)
