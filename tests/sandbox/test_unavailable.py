"""With no engine the sandbox is absent, said in one line; it never runs anything elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from activities.sandbox import SandboxUnavailableError, build_provider, sandbox_availability
from schemas.sandbox import SandboxSettings


async def test_no_engine_makes_the_sandbox_unavailable_in_one_line(tmp_path: Path) -> None:
    settings = SandboxSettings(docker_host=f"unix://{tmp_path}/no-engine.sock")
    availability = await sandbox_availability(settings)
    assert not availability.available
    assert "no Docker engine answers" in availability.reason and "\n" not in availability.reason
    provider = build_provider(settings)
    with pytest.raises(SandboxUnavailableError, match=r"sandbox\.docker_host"):
        await provider.run("Anyone", "echo never")


async def test_switched_off_says_so() -> None:
    availability = await sandbox_availability(SandboxSettings(enabled=False))
    assert availability.model_dump() == {
        "available": False,
        "reason": "sandbox switched off (sandbox.enabled)",
        "misconfigured": False,
    }


@pytest.mark.parametrize("field", ["network", "runtime"])
def test_an_empty_isolation_value_is_refused_naming_the_setting(field: str) -> None:
    with pytest.raises(ValidationError, match=rf"sandbox\.{field}"):
        SandboxSettings.model_validate({field: ""})


def test_a_relative_workspace_is_refused() -> None:
    with pytest.raises(ValidationError, match="absolute"):
        SandboxSettings(workspace=Path("relative/dir"))
