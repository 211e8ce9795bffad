"""Whether a worker serves the task queue: the one question submission asks of the workers.

Who runs the workers, and how their liveness is kept, is the workers' business; a channel hands
its submissions an answer to this question (``workers.presence`` has the stack's own), so the use
cases read none of the supervisor's files.
"""

from __future__ import annotations

from typing import Protocol

from temporalio.client import Client


class WorkerPresence(Protocol):
    """Says whether a worker serves the task queue, and how long an absence may last unsaid."""

    async def serving(self, client: Client) -> bool:
        """Whether some worker serves the task queue right now.

        Raises:
            RPCError: Temporal could not be asked (submission then lets the call itself tell).
        """
        ...

    def grace(self) -> float:
        """Seconds a worker may be away before its absence is said (a restart under way)."""
        ...
