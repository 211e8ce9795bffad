"""The event-log meter: one JSON usage record per line, on a sink of its own (Appendix C).

The lines are a machine-parseable data feed for a log aggregator, kept apart from the
operational logs (which go to stderr and ``$PERSYN_HOME/logs``). Each line is the
:class:`~schemas.models.UsageRecord` as JSON, with its pre-computed cost, so a consumer sums
cost exactly by ``record_id`` without re-pricing. ``-`` as the path writes to stdout, the
natural sink in a container whose logs go to stderr.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import TextIO

from observability.metering.recent import RecentIds
from schemas.models import UsageRecord
from store.private_files import open_private

STDOUT = Path("-")


class EventLogMeter:
    """Appends each usage record as a JSON line to a file (or stdout)."""

    name = "event-log"

    def __init__(self, path: Path) -> None:
        """Write to ``path`` (created with its directory on first record; ``-`` is stdout)."""
        self.path = path
        self._recent = RecentIds()
        self._lock = threading.Lock()
        self._stream: TextIO | None = None

    def _write(self, line: str) -> None:
        with self._lock:
            if self._stream is None:
                if self.path == STDOUT:
                    self._stream = sys.stdout
                else:
                    # Append mode: a rotator that copies and truncates keeps working.
                    self._stream = open_private(self.path, "a")
            self._stream.write(line)
            # One flush per record: a consumer tailing the file sees it at once.
            self._stream.flush()

    async def record(self, usage: UsageRecord) -> None:
        """Append one record (a redelivered record ID is written once)."""
        if not self._recent.first_time(usage.record_id):
            return
        await asyncio.to_thread(self._write, usage.model_dump_json() + "\n")

    async def aclose(self) -> None:
        """Close the file (stdout stays open)."""
        with self._lock:
            stream, self._stream = self._stream, None
        if stream is not None and stream is not sys.stdout:
            stream.close()
