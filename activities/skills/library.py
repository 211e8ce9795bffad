"""Each agent's skill library: a folder per agent, with the supplied skills copied in.

The library lives on disk under ``home/skills/<agent>/`` (``skills.library_dir``), not in
PostgreSQL: the shared skill format *is* a folder, so a library can be mapped into the agent's
sandbox where its helper code runs in place and the agent authors new skills with its file
tools, and an operator can copy skills in and out with ordinary tools. Several worker hosts
need that folder on shared storage.

Supplied skills are copied into a library the first time it is used and on every refresh;
protected ones are put back to their supplied version whenever they differ or are gone (on
refresh and on worker start), unprotected ones only when missing, so an agent's edits to them
are kept.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from activities.skills.format import (
    SKILL_FILE,
    Skill,
    SkillFormatError,
    check_name,
    parse,
    read,
    render,
)
from schemas.ids import HANDLE_PATTERN
from schemas.settings import Settings
from schemas.skills import RefreshReport, SkillSettings, SkillSummary

log = logging.getLogger(__name__)

SHIPPED = Path(__file__).parent / "supplied"
"""The skills shipped with Persyn (the default supplied folder)."""
_HANDLE = re.compile(HANDLE_PATTERN)
_MAX_RESOURCE_PATH = 255
_MAX_RESOURCES = 50
MAX_SKILLS = 1000
"""Skill folders read per library: a listing runs every turn, so a flood is cut off."""


class SkillError(ValueError):
    """A request about skills that cannot be met; the message says what to do."""


def check_agent(agent: str) -> str:
    """``agent`` if it is a valid handle (it names a folder).

    Raises:
        SkillError: It is not.
    """
    if not _HANDLE.match(agent):
        raise SkillError(f"{agent[:40]!r} is not an agent handle (lowercase letters, digits, -)")
    return agent


def check_resource_path(path: str) -> PurePosixPath:
    """``path`` as a relative path inside a skill's folder.

    Raises:
        SkillError: Empty, too long, absolute, holding NUL, a backslash or a ``..`` part.
    """
    if not path or len(path) > _MAX_RESOURCE_PATH:
        raise SkillError(f"a resource path has 1 to {_MAX_RESOURCE_PATH} characters")
    if "\x00" in path or "\\" in path:
        raise SkillError("a resource path holds no NUL or backslash: use '/' between folders")
    pure = PurePosixPath(path)
    if pure.is_absolute() or any(part in ("..", "") for part in pure.parts):
        raise SkillError(f"resource path {path[:60]!r} must stay inside the skill's folder")
    return pure


def _tree(folder: Path) -> list[tuple[str, bytes]]:
    """Every entry under ``folder`` with its content, for comparing two copies."""
    found: list[tuple[str, bytes]] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        base = Path(root)
        for name in dirs + files:
            path = base / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                found.append((rel, b"link:" + str(path.readlink()).encode()))
            elif path.is_file():
                found.append((rel, path.read_bytes()))
    return sorted(found)


class SkillLibrary:
    """The supplied skills and every agent's library."""

    def __init__(self, settings: SkillSettings, *, supplied: Path, root: Path) -> None:
        self.settings = settings
        self.supplied = supplied
        self.root = root

    @classmethod
    def from_settings(cls, settings: Settings) -> SkillLibrary:
        """The library the configuration describes."""
        skills = settings.skills
        return cls(
            skills,
            supplied=skills.supplied_dir or SHIPPED,
            root=skills.library_dir or settings.home / "skills",
        )

    def folder(self, agent: str) -> Path:
        """The agent's library folder."""
        return self.root / check_agent(agent)

    def _folders(self, parent: Path) -> Iterator[Path]:
        if parent.is_dir():
            # Dot-folders are staging copies mid-swap (or left by a crash), never skills.
            yield from sorted(
                p
                for p in parent.iterdir()
                if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
            )

    def _read(self, folder: Path, warnings: list[str]) -> Skill | None:
        try:
            return read(folder, max_bytes=self.settings.max_skill_bytes)
        except (SkillFormatError, OSError) as err:
            line = f"skill skipped: {folder / SKILL_FILE}: {err}"
            log.warning("%s", line)
            warnings.append(line)
            return None

    def supplied_skills(self, warnings: list[str] | None = None) -> dict[str, Skill]:
        """The readable supplied skills by name (broken ones skipped with a warning)."""
        found: dict[str, Skill] = {}
        for folder in self._folders(self.supplied):
            skill = self._read(folder, warnings if warnings is not None else [])
            if skill is not None:
                found[skill.name] = skill
        return found

    def refresh(self, agent: str) -> RefreshReport:
        """Copy supplied skills into ``agent``'s library; put protected ones back as supplied."""
        library = self.folder(agent)
        library.mkdir(parents=True, exist_ok=True)
        warnings: list[str] = []
        restored: list[str] = []
        added: list[str] = []
        for name, skill in self.supplied_skills(warnings).items():
            source, target = self.supplied / name, library / name
            if not target.exists() and not target.is_symlink():
                added.append(name)
            elif skill.protected and (target.is_symlink() or _tree(source) != _tree(target)):
                restored.append(name)
                log.warning("skill %s of agent %s restored to its supplied version", name, agent)
            else:
                continue
            self._replace(source, target)
        for folder in self._folders(library):
            self._read(folder, warnings)
        return RefreshReport(agent=agent, restored=restored, added=added, skipped=warnings)

    def refresh_all(self) -> list[RefreshReport]:
        """Refresh every library that exists (on worker start)."""
        return [
            self.refresh(folder.name)
            for folder in self._folders(self.root)
            if _HANDLE.match(folder.name)
        ]

    def ensure(self, agent: str) -> Path:
        """``agent``'s library, filled with the supplied skills on first use."""
        library = self.folder(agent)
        if not library.is_dir():
            self.refresh(agent)
        return library

    def remove(self, agent: str) -> bool:
        """Delete ``agent``'s library with every skill it authored (the agent is shredded).

        A later use starts a fresh library from the supplied skills alone.

        Returns:
            Whether there was a library to delete.
        """
        library = self.folder(agent)
        if library.is_symlink():  # never follow it out of the library root
            library.unlink()
            return True
        if not library.exists():
            return False
        shutil.rmtree(library)
        return True

    def _replace(self, source: Path, target: Path) -> None:
        # Copy beside the target, then swap, so a reader never sees half a skill.
        staging = target.parent / f".{target.name}.{uuid.uuid4().hex}"
        shutil.copytree(source, staging, symlinks=True)
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        staging.rename(target)

    def listing(self, agent: str) -> tuple[list[SkillSummary], list[str]]:
        """``agent``'s skills by name, and one warning per skill that could not be read."""
        library = self.ensure(agent)
        supplied = self.supplied_skills()
        warnings: list[str] = []
        found: list[SkillSummary] = []
        for count, folder in enumerate(self._folders(library)):
            if count == MAX_SKILLS:
                warnings.append(f"skills past the first {MAX_SKILLS} in {library} are ignored")
                log.warning("%s", warnings[-1])
                break
            skill = self._read(folder, warnings)
            if skill is None:
                continue
            original = supplied.get(skill.name)
            found.append(
                SkillSummary(
                    name=skill.name,
                    description=skill.description,
                    origin="supplied" if original is not None else "own",
                    protected=original is not None and original.protected,
                    resources=self.resources(folder),
                )
            )
        return found, warnings

    def resources(self, folder: Path) -> list[str]:
        """The files beside ``SKILL.md``, relative to the skill's folder."""
        # Names only: a listing runs every turn and must not read the files themselves.
        found: list[str] = []
        for root, _dirs, files in os.walk(folder, followlinks=False):
            for name in files:
                rel = (Path(root) / name).relative_to(folder).as_posix()
                if rel != SKILL_FILE:
                    found.append(rel)
        return sorted(found)[:_MAX_RESOURCES]

    def skill_folder(self, agent: str, name: str) -> Path:
        """The folder of ``agent``'s skill ``name``.

        Raises:
            SkillError: A bad name, or no such skill (the message lists the skills there are).
        """
        try:
            check_name(name)
        except SkillFormatError as err:
            raise SkillError(str(err)) from None
        folder = self.ensure(agent) / name
        if not (folder / SKILL_FILE).is_file() or folder.is_symlink():
            known = ", ".join(s.name for s in self.listing(agent)[0]) or "none"
            raise SkillError(f"no skill named {name!r}; your skills: {known}")
        return folder

    def load(self, agent: str, name: str) -> Skill:
        """``agent``'s skill ``name``, parsed.

        Raises:
            SkillError: No such skill, or it cannot be read.
        """
        folder = self.skill_folder(agent, name)
        try:
            return read(folder, max_bytes=self.settings.max_skill_bytes)
        except SkillFormatError as err:
            raise SkillError(f"skill {name!r} cannot be read: {err}") from None

    def resource(self, agent: str, name: str, path: str) -> str:
        """The text of resource ``path`` of ``agent``'s skill ``name``.

        Raises:
            SkillError: A path leaving the folder, no such file, too large or not text.
        """
        folder = self.skill_folder(agent, name)
        rel = check_resource_path(path)
        full = (folder / rel).resolve()
        if not full.is_relative_to(folder.resolve()):
            raise SkillError(f"resource {path[:60]!r} leads outside the skill's folder")
        if not full.is_file():
            known = ", ".join(self.resources(folder)) or "none"
            raise SkillError(f"skill {name!r} has no resource {path[:60]!r}; it has: {known}")
        size = full.stat().st_size
        if size > self.settings.max_resource_bytes:
            raise SkillError(
                f"resource {path!r} is {size} bytes, more than {self.settings.max_resource_bytes}"
                "; run it in the sandbox instead"
            )
        try:
            return full.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise SkillError(f"resource {path!r} is not UTF-8 text") from None

    def write(
        self,
        agent: str,
        *,
        name: str,
        description: str,
        instructions: str,
        resources: dict[str, str],
    ) -> SkillSummary:
        """Write (or replace) one of ``agent``'s own skills, checked as a reader would.

        Raises:
            SkillError: A bad name, field or resource path; too large; or a protected skill.
        """
        try:
            check_name(name)
            text = render(name, description, instructions, extra={})
            parse(text, folder=name)
        except SkillFormatError as err:
            raise SkillError(str(err)) from None
        original = self.supplied_skills().get(name)
        if original is not None and original.protected:
            raise SkillError(f"{name!r} is a protected skill: write yours under another name")
        if len(resources) > _MAX_RESOURCES:
            raise SkillError(f"at most {_MAX_RESOURCES} resources")
        paths = {check_resource_path(rel): body for rel, body in resources.items()}
        if PurePosixPath(SKILL_FILE) in paths:
            raise SkillError(f"{SKILL_FILE} is written from the instructions, not as a resource")
        size = len(text.encode()) + sum(len(body.encode()) for body in paths.values())
        if size > self.settings.max_write_bytes:
            raise SkillError(
                f"the skill is {size} bytes, more than {self.settings.max_write_bytes}"
            )
        library = self.ensure(agent)
        staging = library / f".{name}.{uuid.uuid4().hex}"
        staging.mkdir()
        (staging / SKILL_FILE).write_text(text, encoding="utf-8")
        for rel, body in paths.items():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_text(body, encoding="utf-8")
        self._replace(staging, library / name)
        shutil.rmtree(staging)
        summaries = {s.name: s for s in self.listing(agent)[0]}
        return summaries[name]
