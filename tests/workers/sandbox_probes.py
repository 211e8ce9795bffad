"""Two tiny workflows that do what workflow code must not, to show what a sandbox catches.

``tests/workers/test_runner.py`` runs them with this module passed through the sandbox, as
the shared mode passes ``workflows/`` through, and with it re-imported per run, as the strict
mode does.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow


@workflow.defn(name="ProbeReadsTheClock")
class ReadsTheClock:
    """Reads the host clock: a run-time proxy catches it only when this module is re-imported."""

    @workflow.run
    async def run(self) -> str:
        """The host's time of day."""
        return datetime.now().isoformat()


@workflow.defn(name="ProbeOpensAFile")
class OpensAFile:
    """Opens a file: the restricted builtins catch it in either mode."""

    @workflow.run
    async def run(self) -> str:
        """This module's first line."""
        with open(__file__, encoding="utf-8") as source:  # noqa: ASYNC230, PTH123 (the probe)
            return source.readline()
