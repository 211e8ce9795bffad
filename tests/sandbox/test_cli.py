"""``persyn sandbox status`` and ``persyn sandbox image build`` against a real engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from typer.testing import CliRunner

from cli.main import app
from schemas.settings import get_settings
from tests.sandbox.conftest import MakeProvider
from tests.sandbox.engine import DockerEngine

runner = CliRunner()


@pytest.fixture
def settings_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    get_settings.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    get_settings.cache_clear()


def test_status_says_available_with_the_engine_and_image(
    settings_env: pytest.MonkeyPatch, docker_engine: DockerEngine
) -> None:
    settings_env.setenv("PERSYN_SANDBOX__DOCKER_HOST", docker_engine.host)
    settings_env.setenv("PERSYN_SANDBOX__IMAGE", docker_engine.image)
    result = runner.invoke(app, ["sandbox", "status"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "sandbox: available"
    assert "network none, runtime runc" in result.output


def test_status_without_an_engine_says_why_in_one_line(
    settings_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings_env.setenv("PERSYN_SANDBOX__DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    result = runner.invoke(app, ["sandbox", "status"])
    assert result.exit_code == 1
    assert result.output.splitlines()[0].startswith(
        "sandbox: unavailable: no Docker engine answers at unix://"
    )


def test_a_missing_image_is_named_with_the_command_that_builds_it(
    settings_env: pytest.MonkeyPatch, docker_engine: DockerEngine
) -> None:
    settings_env.setenv("PERSYN_SANDBOX__DOCKER_HOST", docker_engine.host)
    settings_env.setenv("PERSYN_SANDBOX__IMAGE", "persyn-sandbox:never-built")
    result = runner.invoke(app, ["sandbox", "status"])
    assert result.exit_code == 1
    assert "'persyn-sandbox:never-built' not found: run `persyn sandbox image build`" in (
        result.output
    )


async def test_image_build_makes_an_image_whose_work_dir_the_sandbox_user_owns(
    settings_env: pytest.MonkeyPatch, docker_engine: DockerEngine, make_provider: MakeProvider
) -> None:
    settings_env.setenv("PERSYN_SANDBOX__DOCKER_HOST", docker_engine.host)
    tag = "persyn-sandbox:cli-test"
    result = runner.invoke(app, ["sandbox", "image", "build", "--base", "busybox", "--tag", tag])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].startswith(f"built {tag} (sha256:")
    engine = docker.DockerClient(base_url=docker_engine.host)
    try:
        config = engine.images.get(tag).attrs["Config"]
    finally:
        engine.close()
    assert config["WorkingDir"] == "/work" and not config.get("Env")
    provider = make_provider(image=tag)
    owner = await provider.run("ImageCheck", "stat -c %u /work")
    assert owner.stdout.strip() == "65534"


def test_an_unknown_base_is_one_line(settings_env: pytest.MonkeyPatch) -> None:
    result = runner.invoke(app, ["sandbox", "image", "build", "--base", "alpine"])
    assert result.exit_code == 1
    assert "--base 'alpine': choose 'python' or 'busybox'" in result.output
