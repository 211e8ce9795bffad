"""Parsing SKILL.md: the shared format, broken front matter and hostile names."""

from __future__ import annotations

import pytest

from activities.skills.format import SkillFormatError, check_name, parse, render


def test_front_matter_and_instructions_are_read() -> None:
    text = (
        "---\nname: tidy-csv\ndescription: >\n  Tidy a CSV file.\n  Use it for messy exports.\n"
        "license: MIT\nmetadata:\n  author: ada\n---\n\n# Steps\n\n1. Read it.\n"
    )
    skill = parse(text, folder="tidy-csv")
    assert skill.name == "tidy-csv"
    assert skill.description == "Tidy a CSV file. Use it for messy exports."
    assert skill.instructions == "# Steps\n\n1. Read it."
    assert not skill.protected
    assert skill.extra == {"license": "MIT", "metadata": {"author": "ada"}}


def test_protected_is_read_from_metadata() -> None:
    text = '---\nname: a\ndescription: d\nmetadata:\n  protected: "true"\n---\nbody'
    assert parse(text).protected


def test_render_parses_back() -> None:
    text = render("note-it", "Notes: with a colon", "Body: here", extra={})
    skill = parse(text, folder="note-it")
    assert (skill.name, skill.description, skill.instructions) == (
        "note-it",
        "Notes: with a colon",
        "Body: here",
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter at all", "no front matter"),
        ("---\nname: a\ndescription: d\n", "no front matter"),  # never closed
        ("---\nname: [a\ndescription: d\n---\nx", "not valid YAML at line"),
        ("---\n- a list\n---\nx", "must be a mapping"),
        ("---\ndescription: d\n---\nx", "lacks 'name'"),
        ("---\nname: a\n---\nx", "lacks a 'description'"),
        ("---\nname: a\ndescription: '  '\n---\nx", "lacks a 'description'"),
        ("---\nname: a\ndescription: " + "x" * 1100 + "\n---\nx", "longer than 1024"),
        ("---\nname: 12\ndescription: d\n---\nx", "is text, not int"),
        ("---\nname: a\ndescription: d\nmetadata: 3\n---\nx", "'metadata' must be a mapping"),
        ("---\nname: a\ndescription: d\n---\nbad \x00 byte", "NUL"),
    ],
)
def test_broken_front_matter_is_one_line_naming_the_problem(text: str, problem: str) -> None:
    with pytest.raises(SkillFormatError) as caught:
        parse(text)
    message = str(caught.value)
    assert problem in message and "\n" not in message


def test_the_name_must_be_its_folders() -> None:
    with pytest.raises(SkillFormatError, match="differs from its folder"):
        parse("---\nname: a\ndescription: d\n---\nx", folder="b")


@pytest.mark.parametrize(
    "name",
    ["../etc", "a/b", "a\x00b", "x" * 10_000, "", "-lead", "trail-", "UPPER", "dot.name", ".."],
)
def test_hostile_names_are_refused(name: str) -> None:
    with pytest.raises(SkillFormatError) as caught:
        check_name(name)
    assert len(str(caught.value)) < 200  # a 10 kB name is not echoed back whole


def test_good_names_pass() -> None:
    assert check_name("authoring-skills") == "authoring-skills"
    assert check_name("a") == "a"
