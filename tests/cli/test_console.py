"""The chat's draft is erased at the terminal's real width, never a row more."""

from __future__ import annotations

import io

import pytest

from cli.console import CLEAR_LINE, RESET, UP_AND_CLEAR, Console, rows_of, terminal_columns


def drawn(columns: int, draft: str, name: str = "Ada") -> str:
    """What withdrawing ``draft`` writes on a terminal ``columns`` wide."""
    out = io.StringIO()
    console = Console(name, live=True, out=out, columns=lambda: columns)
    console.delta(draft)
    out.seek(0)
    out.truncate()
    console.withdraw_draft()
    return out.getvalue()


def rows_moved_up(written: str) -> int:
    return written.count(UP_AND_CLEAR)


@pytest.mark.parametrize(
    ("text", "columns", "rows"),
    [
        ("", 80, 1),
        ("x" * 79, 80, 1),
        ("x" * 80, 80, 1),  # a full row does not wrap until the next character
        ("x" * 81, 80, 2),
        ("x" * 200, 120, 2),
        ("one\ntwo", 80, 2),
        ("x" * 90 + "\nshort", 80, 3),
        ("日本語" * 14, 80, 2),  # 42 wide characters take 84 columns
        ("e\u0301" * 80, 80, 1),  # combining accents take no column
    ],
)
def test_rows_count_wrapping_wide_characters_and_line_breaks(
    text: str, columns: int, rows: int
) -> None:
    assert rows_of(text, columns) == rows


def test_a_draft_on_a_wide_terminal_erases_only_its_own_row() -> None:
    # 5 + 100 characters: two rows at 80 columns (the old fixed width), one row at 160.
    written = drawn(160, "y" * 100)

    assert written == RESET + CLEAR_LINE
    assert rows_moved_up(written) == 0


def test_a_draft_that_wraps_erases_exactly_the_rows_it_took() -> None:
    assert rows_moved_up(drawn(40, "y" * 100)) == 2  # "Ada… " + 100 = 105 columns: 3 rows
    assert rows_moved_up(drawn(80, "y" * 75)) == 0  # exactly 80 columns: one row


def test_a_narrow_terminal_counts_every_wrapped_row() -> None:
    assert rows_moved_up(drawn(20, "z" * 95)) == 4  # 100 columns at 20: 5 rows


def test_the_committed_line_replaces_the_draft() -> None:
    out = io.StringIO()
    console = Console("Ada", live=True, out=out, columns=lambda: 120)
    console.delta("thinking about ")
    console.delta("it")
    console.commit("Ada> done")

    assert out.getvalue().endswith(RESET + CLEAR_LINE + "Ada> done\n")
    assert console.draft == ""


def test_without_a_terminal_nothing_is_drawn_but_the_line() -> None:
    out = io.StringIO()
    console = Console("Ada", live=False, out=out, columns=lambda: 80)
    console.delta("draft")
    console.commit("Ada> hi")

    assert out.getvalue() == "Ada> hi\n"


def test_the_width_is_read_from_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "173")
    assert terminal_columns() == 173
