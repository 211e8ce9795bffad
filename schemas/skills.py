"""Skills on the wire: their settings and what a listing or a refresh reports.

A skill is a folder holding ``SKILL.md`` (YAML front matter with ``name`` and ``description``,
then instructions) and optional resource files. Supplied skills come from a configured folder;
each agent's own skills live in its library (``docs/tools.md``, Skills).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SkillOrigin = Literal["supplied", "own"]


class SkillSettings(BaseModel):
    """Where skills come from and how much of them reaches a prompt (``PERSYN_SKILLS__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(default=True, description="Offer skills and the skill tools.")
    supplied_dir: Path | None = Field(
        default=None,
        description="Folder of supplied skills; default: the skills shipped with Persyn.",
    )
    library_dir: Path | None = Field(
        default=None,
        description="Folder holding one library folder per agent; default: home/skills/.",
    )
    max_listed: int = Field(
        default=100, ge=1, le=1000, description="Skills named in the prompt at most."
    )
    max_skill_bytes: int = Field(
        default=256_000, ge=1024, le=10_000_000, description="A larger SKILL.md is skipped."
    )
    max_instructions_chars: int = Field(
        default=40_000, ge=500, le=1_000_000, description="load_skill cuts instructions here."
    )
    max_resource_bytes: int = Field(
        default=200_000, ge=1024, le=10_000_000, description="read_skill_resource refuses more."
    )
    max_write_bytes: int = Field(
        default=200_000, ge=1024, le=10_000_000, description="write_skill refuses a larger skill."
    )
    sandbox_write: bool = Field(
        default=False,
        description="Map the agent's library read-write into its sandbox, so it can author "
        "skills there (read-only otherwise).",
    )


class SkillSummary(BaseModel):
    """What the prompt and ``persyn skills list`` show of one skill."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    origin: SkillOrigin
    protected: bool = False
    resources: list[str] = Field(default_factory=list, description="Files beside SKILL.md.")


class SkillsStatus(BaseModel):
    """Whether the skill tools are offered, and why not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    available: bool
    reason: str | None = None


class RefreshReport(BaseModel):
    """What one refresh of an agent's library did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    restored: list[str] = Field(
        default_factory=list, description="Protected skills put back to their supplied version."
    )
    added: list[str] = Field(default_factory=list, description="Supplied skills copied in.")
    skipped: list[str] = Field(
        default_factory=list, description="One line per skill that could not be read."
    )
