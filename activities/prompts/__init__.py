"""Prompt texts as data files: editing one never changes workflow code or breaks replay."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_HERE = Path(__file__).parent


@cache
def load(name: str) -> str:
    """The text of ``activities/prompts/<name>`` (cached; prompts are read-only at run time)."""
    return (_HERE / name).read_text(encoding="utf-8").strip()
