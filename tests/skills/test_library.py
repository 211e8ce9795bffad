"""An agent's library: supplied skills copied in, protected ones restored, own ones written."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from activities.skills.library import SkillError, SkillLibrary
from activities.skills.wiring import build_skills, sandbox_mount, skills_status
from schemas.settings import Settings
from schemas.skills import SkillSettings
from tests.skills.conftest import skill_text, write_skill


def names(library: SkillLibrary, agent: str) -> list[str]:
    return [skill.name for skill in library.listing(agent)[0]]


def test_first_use_copies_the_supplied_skills(library: SkillLibrary) -> None:
    found, warnings = library.listing("ada")
    assert warnings == []
    by_name = {skill.name: skill for skill in found}
    assert sorted(by_name) == ["brew-tea", "keep-safe"]
    assert by_name["keep-safe"].protected and by_name["keep-safe"].origin == "supplied"
    assert by_name["keep-safe"].resources == ["notes.md"]
    assert not by_name["brew-tea"].protected
    assert (library.folder("ada") / "keep-safe" / "notes.md").read_text() == "original notes"


def test_a_changed_protected_skill_is_restored_on_refresh(library: SkillLibrary) -> None:
    folder = library.ensure("ada") / "keep-safe"
    (folder / "SKILL.md").write_text(skill_text("keep-safe", "Hijacked.", "Do evil."))
    (folder / "notes.md").write_text("tampered")
    (folder / "extra.sh").write_text("rm -rf /")

    report = library.refresh("ada")

    assert report.restored == ["keep-safe"]
    assert library.load("ada", "keep-safe").instructions == "Never change me."
    assert (folder / "notes.md").read_text() == "original notes"
    assert not (folder / "extra.sh").exists()
    assert library.refresh("ada").restored == []  # intact now: nothing to do


def test_a_deleted_protected_skill_is_restored_on_refresh(library: SkillLibrary) -> None:
    import shutil

    shutil.rmtree(library.ensure("ada") / "keep-safe")
    assert "keep-safe" not in names(library, "ada")

    report = library.refresh("ada")

    assert report.added == ["keep-safe"]
    assert "keep-safe" in names(library, "ada")


def test_a_protected_skill_replaced_by_a_link_is_restored(
    library: SkillLibrary, tmp_path: Path
) -> None:
    import shutil

    folder = library.ensure("ada") / "keep-safe"
    shutil.rmtree(folder)
    outside = write_skill(tmp_path / "elsewhere", "keep-safe", skill_text("keep-safe", "Fake."))
    folder.symlink_to(outside)

    assert library.refresh("ada").restored == ["keep-safe"]
    assert not folder.is_symlink()
    assert library.load("ada", "keep-safe").description == "A protected procedure."


def test_an_unprotected_supplied_skill_keeps_the_agents_edits(library: SkillLibrary) -> None:
    folder = library.ensure("ada") / "brew-tea"
    (folder / "SKILL.md").write_text(skill_text("brew-tea", "Tea, my way.", "Warm the pot."))

    assert library.refresh("ada").restored == []
    assert library.load("ada", "brew-tea").instructions == "Warm the pot."


def test_the_worker_start_restores_every_library(settings: Settings) -> None:
    library = SkillLibrary.from_settings(settings)
    for agent in ("ada", "bob"):
        (library.ensure(agent) / "keep-safe" / "SKILL.md").write_text("edited")

    skills = build_skills(settings)

    assert skills.status.available and [t.name for t in skills.tools] == [
        "load_skill",
        "read_skill_resource",
        "write_skill",
    ]
    for agent in ("ada", "bob"):
        assert library.load(agent, "keep-safe").instructions == "Never change me."


def test_a_broken_skill_is_skipped_with_one_line_naming_its_file(
    library: SkillLibrary, caplog: pytest.LogCaptureFixture
) -> None:
    root = library.ensure("ada")
    write_skill(root, "broken", "---\nname: broken\ndescription: [unclosed\n---\nx")
    write_skill(root, "nameless", "---\ndescription: no name\n---\nx")
    (root / "not-text").mkdir()
    (root / "not-text" / "SKILL.md").write_bytes(b"\xff\xfe\x00garbage")

    with caplog.at_level(logging.WARNING):
        found, warnings = library.listing("ada")

    assert [s.name for s in found] == ["brew-tea", "keep-safe"]
    assert len(warnings) == 3
    assert any(str(root / "broken" / "SKILL.md") in w and "not valid YAML" in w for w in warnings)
    assert any("nameless" in w and "lacks 'name'" in w for w in warnings)
    assert any("not-text" in w and "not UTF-8" in w for w in warnings)
    assert all("\n" not in w for w in warnings)
    assert any("broken" in r.getMessage() for r in caplog.records)


def test_a_broken_supplied_skill_does_not_stop_the_others(
    settings: Settings, supplied: Path
) -> None:
    write_skill(supplied, "bad-one", "not a skill")
    skills = build_skills(settings)
    assert skills.status.available
    assert names(SkillLibrary.from_settings(settings), "ada") == ["brew-tea", "keep-safe"]


def test_resources_are_read_inside_the_folder_only(library: SkillLibrary) -> None:
    assert library.resource("ada", "keep-safe", "notes.md") == "original notes"
    for hostile, problem in [
        ("../brew-tea/SKILL.md", "stay inside"),
        ("/etc/passwd", "stay inside"),
        ("notes\x00.md", "NUL"),
        ("x" * 10_000, "1 to 255"),
        ("missing.md", "has no resource"),
    ]:
        with pytest.raises(SkillError, match=problem):
            library.resource("ada", "keep-safe", hostile)
    (library.folder("ada") / "keep-safe" / "link.md").symlink_to("/etc/hostname")
    with pytest.raises(SkillError, match="leads outside"):
        library.resource("ada", "keep-safe", "link.md")


def test_a_resource_past_the_cap_is_refused(settings: Settings, supplied: Path) -> None:
    small = settings.model_copy(
        update={"skills": settings.skills.model_copy(update={"max_resource_bytes": 1024})}
    )
    (supplied / "brew-tea" / "big.txt").write_text("x" * 5000)
    library = SkillLibrary.from_settings(small)
    with pytest.raises(SkillError, match="5000 bytes, more than 1024"):
        library.resource("ada", "brew-tea", "big.txt")


def test_hostile_skill_and_agent_names_are_refused(library: SkillLibrary) -> None:
    for name in ("../keep-safe", "a\x00b", "x" * 10_000):
        with pytest.raises(SkillError):
            library.load("ada", name)
    with pytest.raises(SkillError, match="not an agent handle"):
        library.listing("../ada")


def test_write_checks_the_skill_and_spares_protected_ones(library: SkillLibrary) -> None:
    summary = library.write(
        "ada",
        name="count-sheep",
        description="Count sheep when asked to sleep.",
        instructions="1. Count.",
        resources={"scripts/count.py": "print(1)"},
    )
    assert (summary.origin, summary.resources) == ("own", ["scripts/count.py"])
    assert library.load("ada", "count-sheep").instructions == "1. Count."
    cases: list[tuple[dict[str, Any], str]] = [
        ({"name": "keep-safe"}, "protected"),
        ({"name": "../escape"}, "lowercase letters"),
        ({"name": "x" * 10_000}, "at most 64"),
        ({"description": ""}, "description"),
        ({"resources": {"../out.py": "x"}}, "stay inside"),
        ({"resources": {"SKILL.md": "x"}}, "written from the instructions"),
        ({"instructions": "x" * 300_000}, "more than 200000"),
    ]
    for change, problem in cases:
        args: dict[str, Any] = {
            "name": "other",
            "description": "d",
            "instructions": "i",
            "resources": {},
            **change,
        }
        with pytest.raises(SkillError, match=problem):
            library.write("ada", **args)
    assert names(library, "ada") == ["brew-tea", "count-sheep", "keep-safe"]


def test_status_says_why_skills_are_absent(tmp_path: Path, settings: Settings) -> None:
    off = Settings(home=tmp_path, skills=SkillSettings(enabled=False))
    assert skills_status(off).reason == "switched off (skills.enabled = false)"
    missing = Settings(home=tmp_path, skills=SkillSettings(supplied_dir=tmp_path / "nowhere"))
    status = skills_status(missing)
    assert not status.available and "skills.supplied_dir" in (status.reason or "")
    absent = build_skills(missing)
    assert absent.tools == [] and absent.sources == []
    assert skills_status(settings).available


def test_the_sandbox_mount_is_the_agents_library(settings: Settings) -> None:
    path, mode = sandbox_mount(settings, "ada")
    assert path == SkillLibrary.from_settings(settings).folder("ada") and mode == "ro"
    writable = settings.model_copy(
        update={"skills": settings.skills.model_copy(update={"sandbox_write": True})}
    )
    assert sandbox_mount(writable, "ada")[1] == "rw"


def test_a_skill_file_linking_out_of_the_library_is_skipped(
    library: SkillLibrary, tmp_path: Path
) -> None:
    planted = tmp_path / "host-secret.md"
    planted.write_text(skill_text("leak", "host secret"))
    (library.ensure("ada") / "leak").mkdir()
    (library.folder("ada") / "leak" / "SKILL.md").symlink_to(planted)
    (library.folder("ada") / ".brew-tea.0123").mkdir()  # a staging copy left by a crash

    found, warnings = library.listing("ada")

    assert [s.name for s in found] == ["brew-tea", "keep-safe"]
    assert warnings == [
        f"skill skipped: {library.folder('ada') / 'leak' / 'SKILL.md'}: "
        "SKILL.md is a link: make it a plain file"
    ]
    with pytest.raises(SkillError, match=r"cannot be read: SKILL\.md is a link"):
        library.load("ada", "leak")


def test_a_flooded_library_is_cut_off_with_a_warning(
    library: SkillLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("activities.skills.library.MAX_SKILLS", 3)
    for name in ("zz-one", "zz-two"):
        write_skill(library.ensure("ada"), name, skill_text(name, "Flood."))

    found, warnings = library.listing("ada")

    assert [s.name for s in found] == ["brew-tea", "keep-safe", "zz-one"]
    assert warnings == [f"skills past the first 3 in {library.folder('ada')} are ignored"]
