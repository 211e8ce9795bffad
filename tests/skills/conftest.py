"""Skill libraries in a fresh folder per test, and skill folders written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.skills.library import SkillLibrary
from schemas.settings import Settings
from schemas.skills import SkillSettings


def write_skill(parent: Path, folder: str, text: str, **files: str) -> Path:
    """A skill folder under ``parent`` holding ``SKILL.md`` = ``text`` and ``files``."""
    path = parent / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text, encoding="utf-8")
    for name, body in files.items():
        (path / name).write_text(body, encoding="utf-8")
    return path


def skill_text(
    name: str, description: str, body: str = "Do the thing.", *, protected: bool = False
) -> str:
    """A valid ``SKILL.md``."""
    meta = '\nmetadata:\n  protected: "true"' if protected else ""
    return f"---\nname: {name}\ndescription: {description}{meta}\n---\n\n{body}\n"


@pytest.fixture
def supplied(tmp_path: Path) -> Path:
    """A supplied folder with one protected and one ordinary skill."""
    root = tmp_path / "supplied"
    write_skill(
        root,
        "keep-safe",
        skill_text("keep-safe", "A protected procedure.", "Never change me.", protected=True),
        **{"notes.md": "original notes"},
    )
    write_skill(root, "brew-tea", skill_text("brew-tea", "How to brew tea.", "Boil water."))
    return root


@pytest.fixture
def settings(tmp_path: Path, supplied: Path) -> Settings:
    """Settings whose skills come from ``supplied`` into a library under the test's folder."""
    return Settings(
        home=tmp_path / "home",
        skills=SkillSettings(supplied_dir=supplied, library_dir=tmp_path / "libraries"),
    )


@pytest.fixture
def library(settings: Settings) -> SkillLibrary:
    """The library ``settings`` describe."""
    return SkillLibrary.from_settings(settings)
