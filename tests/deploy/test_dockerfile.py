"""The worker Dockerfile, validated offline: the stage that runs, what it copies, who runs it."""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str


def parse(text: str) -> list[Instruction]:
    """Dockerfile instructions, with comments dropped and continuation lines joined."""
    instructions: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, args = full.partition(" ")
        instructions.append(Instruction(keyword.upper(), args.strip()))
    return instructions


def stages(instructions: list[Instruction]) -> list[list[Instruction]]:
    """Instructions grouped by build stage (each starts at a FROM)."""
    grouped: list[list[Instruction]] = []
    for instruction in instructions:
        if instruction.keyword == "FROM":
            grouped.append([])
        if grouped:
            grouped[-1].append(instruction)
    return grouped


def global_args(instructions: list[Instruction]) -> dict[str, str]:
    """``ARG`` defaults declared before the first ``FROM``."""
    found: dict[str, str] = {}
    for instruction in instructions:
        if instruction.keyword == "FROM":
            break
        if instruction.keyword == "ARG":
            name, _, default = instruction.args.partition("=")
            found[name] = default.strip('"')
    return found


def ignored(path: str, patterns: list[str]) -> bool:
    """Whether .dockerignore keeps ``path`` (or a parent directory) out of the build context."""
    parts = path.split("/")
    candidates = ["/".join(parts[: index + 1]) for index in range(len(parts))]
    for pattern in patterns:
        assert not pattern.startswith("!"), "re-inclusion rules are not supported by this test"
        anywhere = pattern.removeprefix("**/")
        for candidate in candidates:
            if fnmatch.fnmatchcase(candidate, pattern):
                return True
            if pattern.startswith("**/") and any(
                fnmatch.fnmatchcase("/".join(candidate.split("/")[i:]), anywhere)
                for i in range(len(candidate.split("/")))
            ):
                return True
    return False


@pytest.fixture(scope="module")
def instructions() -> list[Instruction]:
    return parse((ROOT / "Dockerfile").read_text())


@pytest.fixture(scope="module")
def runtime(instructions: list[Instruction]) -> list[Instruction]:
    return stages(instructions)[-1]


@pytest.fixture(scope="module")
def dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def last(stage: list[Instruction], keyword: str) -> Instruction:
    found = [i for i in stage if i.keyword == keyword]
    assert found, f"no {keyword} in the final stage"
    return found[-1]


def test_every_stage_builds_on_python_311_slim(instructions: list[Instruction]) -> None:
    defaults = global_args(instructions)
    for stage in stages(instructions):
        base = stage[0].args.split()[0]
        base = re.sub(r"\$\{(\w+)\}", lambda m: defaults[m[1]], base)
        assert base == "python:3.11-slim"


def test_the_image_runs_the_worker(runtime: list[Instruction]) -> None:
    cmd = last(runtime, "CMD").args
    assert json.loads(cmd) == ["python", "-m", "workers.main"]  # exec form: signals reach it


def test_the_worker_runs_as_a_user_without_privileges(runtime: list[Instruction]) -> None:
    user = last(runtime, "USER").args.split(":")[0]
    assert user not in {"root", "0"}
    created = " ".join(i.args for i in runtime if i.keyword == "RUN")
    assert re.search(rf"useradd\b.*\b{re.escape(user)}\b", created), "the user is never created"
    position = runtime.index(last(runtime, "USER"))
    # Nothing after USER may need root (it would fail, or tempt someone to drop USER).
    assert not [i for i in runtime[position:] if i.keyword == "RUN"]


def test_the_project_is_installed_with_the_local_extra_optional(
    instructions: list[Instruction],
) -> None:
    build = stages(instructions)[0]
    installs = [i.args for i in build if i.keyword == "RUN" and "pip install" in i.args]
    assert installs and '".${PERSYN_EXTRAS:+[$PERSYN_EXTRAS]}"' in installs[-1]
    extras = [i.args for i in build if i.keyword == "ARG" and i.args.startswith("PERSYN_EXTRAS")]
    assert extras == ['PERSYN_EXTRAS=""'], "the base build must not pull the local extra in"
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert "local" in optional


def test_healthcheck_runs_a_script_the_image_contains(runtime: list[Instruction]) -> None:
    check = last(runtime, "HEALTHCHECK").args
    command = json.loads(check[check.index("CMD") + len("CMD") :].strip())
    script = command[-1]
    copies = {
        i.args.split()[-1]: i.args.split()[-2]
        for i in runtime
        if i.keyword == "COPY" and "--from" not in i.args
    }
    assert script in copies, f"{script} is not copied into the image"
    assert (ROOT / copies[script]).is_file()


def test_the_build_context_holds_what_the_build_needs(
    instructions: list[Instruction], dockerignore: list[str]
) -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = [
        pattern.rstrip("*")
        for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    ]
    for package in packages:
        assert (ROOT / package / "__init__.py").is_file(), package
        assert not ignored(f"{package}/__init__.py", dockerignore), f"{package} is ignored"
    assert not ignored("pyproject.toml", dockerignore)
    assert not ignored("store/migrations/versions/0001_initial.py", dockerignore)
    assert not ignored("activities/prompts/standing_constraints.md", dockerignore)
    for instruction in instructions:
        if instruction.keyword != "COPY" or "--from" in instruction.args:
            continue
        for source in instruction.args.split()[:-1]:
            if source.startswith("--") or source == ".":
                continue
            assert (ROOT / source).exists(), source
            assert not ignored(source, dockerignore), f"{source} is copied but ignored"
    # Local state never reaches the image.
    for private in (".venv/bin/python", ".git/config", ".env", "tests/conftest.py"):
        assert ignored(private, dockerignore), private
