"""A supervised child's output on its way to its log, each line cut to a readable length.

llama.cpp writes a grammar it cannot compile to stderr in one line, tens of kilobytes long,
before it dies; a crash loop repeated it into every restart. The supervisor reads each child's
output through a pipe and writes it to the child's log with every line cut at
:data:`MAX_LINE_BYTES`, saying how much was cut.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from store.private_files import open_private

MAX_LINE_BYTES = 2000


class LineCutter:
    """Passes a byte stream through, cutting each line after ``limit`` bytes."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self.kept = 0
        self.cut = 0

    def feed(self, data: bytes) -> bytes:
        """What to write for ``data``, the next bytes of the stream."""
        out = bytearray()
        parts = data.split(b"\n")
        for index, part in enumerate(parts):
            room = max(0, self.limit - self.kept)
            out += part[:room]
            self.kept += min(len(part), room)
            self.cut += max(0, len(part) - room)
            if index < len(parts) - 1:  # a line break followed this part
                out += self._end_line()
        return bytes(out)

    def close(self) -> bytes:
        """What to write when the stream ends (the end of an unfinished line)."""
        return self._end_line() if self.kept or self.cut else b""

    def _end_line(self) -> bytes:
        note = f" [... {self.cut:,} more bytes cut]".encode() if self.cut else b""
        self.kept = self.cut = 0
        return note + b"\n"


class ChildOutput:
    """One child's pipe, read without blocking, written to its log through a cutter."""

    def __init__(self, fd: int, log: Path | BinaryIO) -> None:
        """Copy pipe ``fd`` to ``log`` (a path is opened privately, never through a link)."""
        self.fd = fd
        os.set_blocking(fd, False)
        self.log: BinaryIO = open_private(log, "ab") if isinstance(log, Path) else log
        self.cutter = LineCutter()

    def pump(self) -> bool:
        """Copy what the pipe holds now; whether the pipe is still open."""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                self.log.flush()
                return True
            if not data:
                self.log.flush()
                return False
            self.log.write(self.cutter.feed(data))

    def close(self) -> None:
        """Copy the rest, end the last line and close the pipe and the log."""
        try:
            self.pump()
            self.log.write(self.cutter.close())
        finally:
            self.log.close()
            os.close(self.fd)


def spawn(
    command: list[str],
    log_file: Path,
    *,
    preexec_fn: Callable[[], None],
    pass_fds: Sequence[int] = (),
) -> tuple[subprocess.Popen[bytes], ChildOutput]:
    """Start a supervised child whose output goes to ``log_file`` through a cutter.

    Raises:
        store.private_files.PrivatePathError: The log is a link or not private; nothing is
            started.
    """
    log = open_private(log_file, "ab")  # first: a log that cannot be written starts nothing
    try:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=preexec_fn,  # safe: the supervisor runs one thread
            pass_fds=pass_fds,
        )
    except BaseException:
        log.close()
        raise
    assert process.stdout is not None
    output = ChildOutput(os.dup(process.stdout.fileno()), log)
    process.stdout.close()
    return process, output
