"""The chat's drawing: committed lines, and a streamed draft withdrawn before the outcome.

The draft is presentation only. When the committed outcome arrives the draft is erased, and
erasing it means moving the cursor up exactly as many terminal rows as the draft took: at the
terminal's real width, counting wide characters twice and each line break as a new row. One
row too many erases the person's own message above it.
"""

from __future__ import annotations

import shutil
import sys
import unicodedata
from collections.abc import Callable
from typing import TextIO

DIM = "\x1b[2m"
RESET = "\x1b[0m"
CLEAR_LINE = "\r\x1b[2K"
UP_AND_CLEAR = "\x1b[1A\x1b[2K"


def columns_of(text: str) -> int:
    """How many terminal columns ``text`` (one line, no escapes) takes."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in {"Cf", "Mn", "Me"}:
            continue
        width += 2 if unicodedata.east_asian_width(char) in {"W", "F"} else 1
    return width


def rows_of(text: str, columns: int) -> int:
    """How many terminal rows ``text`` takes when printed from the start of a row.

    A row filled to its last column does not wrap until the next character arrives, so a line
    of exactly ``columns`` columns takes one row, not two.
    """
    columns = max(1, columns)
    return sum(max(1, -(-columns_of(line) // columns)) for line in text.split("\n"))


def terminal_columns() -> int:
    """The terminal's width now (it may change between two messages)."""
    return shutil.get_terminal_size().columns


class Console:
    """Draws the chat on ``out``: a dim live draft, then the committed line in its place."""

    def __init__(
        self,
        name: str,
        *,
        live: bool,
        out: TextIO | None = None,
        columns: Callable[[], int] = terminal_columns,
    ) -> None:
        self.name = name
        self.live = live
        self.out = out or sys.stdout
        self.columns = columns
        self.draft = ""

    @property
    def prefix(self) -> str:
        """What opens a draft line."""
        return f"{self.name}… "

    def delta(self, text: str) -> None:
        """Show a piece of the draft as it is generated."""
        if not self.live:
            return
        if not self.draft:
            self.out.write(f"{DIM}{self.prefix}")
        self.draft += text
        self.out.write(text)
        self.out.flush()

    def withdraw_draft(self) -> None:
        """Erase the draft: the cursor ends at the start of the row where it began."""
        if self.live and self.draft:
            rows = rows_of(self.prefix + self.draft, self.columns())
            self.out.write(RESET + CLEAR_LINE + UP_AND_CLEAR * (rows - 1))
            self.out.flush()
        self.draft = ""

    def commit(self, line: str) -> None:
        """Print a committed line (a reply, a notice), replacing any draft."""
        self.withdraw_draft()
        self.out.write(line + "\n")
        self.out.flush()
