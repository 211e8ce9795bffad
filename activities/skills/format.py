"""The shared skill format: a folder named after the skill, holding ``SKILL.md``.

``SKILL.md`` opens with YAML front matter between ``---`` lines: ``name`` (lowercase letters,
digits and hyphens, the folder's name) and ``description`` (what it does and when to use it),
optionally ``license``, ``compatibility``, ``allowed-tools`` and ``metadata`` (Persyn reads
``metadata.protected``). The instructions follow. Every problem is a :class:`SkillFormatError`
whose message is one line naming what to fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SKILL_FILE = "SKILL.md"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
# libyaml's loader when present: every turn's catalogue parses each skill's front matter.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # both are safe loaders
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class SkillFormatError(ValueError):
    """A skill that cannot be used: its message is one line naming the problem."""


@dataclass(frozen=True)
class Skill:
    """One parsed skill.

    Attributes:
        name: The skill's name (also its folder's).
        description: What it does and when to use it.
        instructions: The body of ``SKILL.md`` after the front matter.
        protected: Whether the supplied version is restored when changed or removed.
        extra: The other front-matter fields, as written.
    """

    name: str
    description: str
    instructions: str
    protected: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def check_name(name: object) -> str:
    """``name`` if it is a valid skill name.

    Raises:
        SkillFormatError: Not a string, too long, or holding anything but lowercase letters,
            digits and inner hyphens (so no NUL, slash or ``..``).
    """
    if not isinstance(name, str):
        raise SkillFormatError(f"a skill name is text, not {type(name).__name__}")
    if len(name) > MAX_NAME:
        raise SkillFormatError(f"a skill name has at most {MAX_NAME} characters, not {len(name)}")
    if not _NAME.match(name):
        raise SkillFormatError(
            f"skill name {name[:40]!r} may hold only lowercase letters, digits and inner "
            "hyphens (e.g. 'tidy-csv')"
        )
    return name


def parse(text: str, *, folder: str | None = None) -> Skill:
    """Parse the text of a ``SKILL.md``.

    Args:
        text: The file's content.
        folder: The name of the folder it sits in; the skill's name must equal it.

    Raises:
        SkillFormatError: No front matter, invalid YAML, a missing or invalid field.
    """
    match = _FRONT.match(text.lstrip("\ufeff"))
    if match is None:
        raise SkillFormatError("no front matter: start with '---', name and description, '---'")
    try:
        data = yaml.load(match.group(1), Loader=_LOADER)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "not YAML"
        raise SkillFormatError(f"front matter is not valid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise SkillFormatError("front matter must be a mapping of name, description, ...")
    if "name" not in data:
        raise SkillFormatError("front matter lacks 'name'")
    name = check_name(data.pop("name"))
    if folder is not None and name != folder:
        raise SkillFormatError(f"name {name!r} differs from its folder {folder[:40]!r}")
    description = data.pop("description", None)
    if not isinstance(description, str) or not description.strip():
        raise SkillFormatError("front matter lacks a 'description' (what it does, when to use it)")
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        raise SkillFormatError(f"description longer than {MAX_DESCRIPTION} characters")
    if "\x00" in text:
        raise SkillFormatError("the file holds a NUL character")
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise SkillFormatError("'metadata' must be a mapping")
    protected = str((metadata or {}).get("protected", "false")).lower() == "true"
    return Skill(
        name=name,
        description=description,
        instructions=text[match.end() :].strip(),
        protected=protected,
        extra=data,
    )


def read(folder: Path, *, max_bytes: int) -> Skill:
    """Read and parse the skill in ``folder``.

    Raises:
        SkillFormatError: The file is missing, too large, not UTF-8 or not a valid skill.
    """
    path = folder / SKILL_FILE
    if path.is_symlink():
        # A link could lead the worker to read a host file the agent planted in its library.
        raise SkillFormatError(f"{SKILL_FILE} is a link: make it a plain file")
    if not path.is_file():
        raise SkillFormatError(f"no {SKILL_FILE} in the folder")
    size = path.stat().st_size
    if size > max_bytes:
        raise SkillFormatError(f"{SKILL_FILE} is {size} bytes, more than {max_bytes}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SkillFormatError(f"{SKILL_FILE} is not UTF-8 text") from None
    return parse(text, folder=folder.name)


def render(name: str, description: str, instructions: str, *, extra: dict[str, Any]) -> str:
    """A ``SKILL.md`` text for these fields (the inverse of :func:`parse`)."""
    front = {"name": name, "description": description, **extra}
    dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True).strip()
    return f"---\n{dumped}\n---\n\n{instructions.strip()}\n"
