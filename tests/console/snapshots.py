"""Text snapshots of the console's screens: what a person would read, with what varies masked.

The screen is rendered as text, as the terminal would show it; IDs become ``#`` and digits
``0`` (same widths, so the layout is compared too), and trailing blanks are dropped. Set
``PERSYN_UPDATE_SNAPSHOTS=1`` to write a snapshot afresh, then read it before committing it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from textual.app import App

HERE = Path(__file__).parent / "snapshots"
ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b|\b[0-9a-f]{32}\b")
DIGIT = re.compile(r"(?<![fF])\d")
"""A digit, but not a function key's (``f2``)."""


def screen_text(app: App[None]) -> str:
    """The current screen, as text."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text for strip in strips)


def masked(text: str, *, collapse: bool = False) -> str:
    """``text`` with IDs and digits masked, trailing blanks dropped (runs of them, if asked)."""
    text = ULID.sub(lambda m: "#" * len(m.group()), text)
    text = DIGIT.sub("0", text)
    lines = [line.rstrip() for line in text.splitlines()]
    if collapse:
        lines = [re.sub(r"0+", "0", re.sub(r" {2,}", " ", line)) for line in lines]
    return "\n".join(lines).rstrip() + "\n"


def matches(name: str, shown: str) -> bool:
    """Whether ``shown`` is the snapshot ``name`` (written first when asked to update)."""
    path = HERE / f"{name}.txt"
    if os.environ.get("PERSYN_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        HERE.mkdir(exist_ok=True)
        path.write_text(shown, encoding="utf-8")
    return path.read_text(encoding="utf-8") == shown
