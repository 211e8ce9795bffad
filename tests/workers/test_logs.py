"""Logs stay readable: long lines are cut, expected cancellations leave no traceback."""

from __future__ import annotations

import asyncio
import io
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from workers.logs import MAX_MESSAGE_CHARS, ReadableRecords
from workers.output import MAX_LINE_BYTES, ChildOutput, LineCutter


def test_a_line_longer_than_the_limit_is_cut_saying_how_much() -> None:
    cutter = LineCutter(limit=10)
    written = cutter.feed(b"short\n" + b"x" * 25 + b"\nnext") + cutter.close()

    assert written == b"short\n" + b"x" * 10 + b" [... 15 more bytes cut]\nnext\n"


def test_a_long_line_arriving_in_pieces_is_cut_once() -> None:
    cutter = LineCutter(limit=8)
    written = b"".join(cutter.feed(piece) for piece in (b"abcd", b"efgh", b"ijkl", b"mn\nok\n"))

    assert written == b"abcdefgh [... 6 more bytes cut]\nok\n"


def test_a_child_that_dumps_a_grammar_leaves_a_readable_log(tmp_path: Path) -> None:
    log = tmp_path / "model-server.log"
    dump = "root ::= " + "?)" * 30_000
    child = subprocess.Popen(
        [sys.executable, "-c", f"print('loading'); print({dump!r}); print('crashed')"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert child.stdout is not None
    output = ChildOutput(child.stdout.fileno(), log)
    while output.pump():
        child.poll()
    child.wait(10)
    output.close()

    lines = log.read_text().splitlines()
    assert lines[0] == "loading"
    assert lines[1].endswith(f" [... {len(dump) - MAX_LINE_BYTES:,} more bytes cut]")
    assert lines[2] == "crashed"
    assert max(len(line) for line in lines) < MAX_LINE_BYTES + 40


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ReadableRecords())
    logger = logging.getLogger("tests.readable")
    logger.addHandler(handler)
    logger.propagate = False
    yield stream
    logger.removeHandler(handler)


def test_an_expected_cancellation_is_one_line(captured: io.StringIO) -> None:
    log = logging.getLogger("tests.readable")
    try:
        raise RuntimeError("activity interrupted") from asyncio.CancelledError()
    except RuntimeError:
        log.exception("completing activity %s as failed", "respond")

    assert captured.getvalue() == "completing activity respond as failed (cancelled)\n"


def test_a_real_error_keeps_its_traceback(captured: io.StringIO) -> None:
    try:
        raise ValueError("broken")
    except ValueError:
        logging.getLogger("tests.readable").exception("failed")

    text = captured.getvalue()
    assert "Traceback" in text and "ValueError: broken" in text


def test_a_huge_message_is_cut(captured: io.StringIO) -> None:
    logging.getLogger("tests.readable").warning("grammar: %s", "x" * 50_000)

    line = captured.getvalue().rstrip("\n")
    assert len(line) < MAX_MESSAGE_CHARS + 60
    assert "characters cut]" in line
