"""What a use case refuses, said without any channel's wording; each channel adds its own hint."""

from __future__ import annotations


class UseCaseError(Exception):
    """A request the caller can fix (an unknown agent, someone else's record)."""


class UnknownAgentError(UseCaseError):
    """No agent has this handle."""

    def __init__(self, handle: str) -> None:
        super().__init__(f"there is no agent {handle!r}")
        self.handle = handle


class NotTheAgentsError(UseCaseError):
    """A record exists but belongs to another agent than the one named."""

    def __init__(self, *, what: str, plural: str, record_id: str, agent: str) -> None:
        super().__init__(f"{what} {record_id} is not one of {agent}'s {plural}")
        self.what = what
        self.record_id = record_id
        self.agent = agent


class NoWorkerError(UseCaseError):
    """No worker serves the task queue, so nothing would answer the event."""

    def __init__(self, task_queue: str, *, event_id: str | None = None) -> None:
        self.line = f"no worker is serving task queue {task_queue!r}"
        super().__init__(self.line)
        self.task_queue = task_queue
        self.event_id = event_id
        """The event that was not sent: resending it with this ID is safe."""


class TemporalUnreachableError(UseCaseError):
    """Temporal did not answer; ``event_id`` names the event that may be resent."""

    def __init__(self, reason: str, *, event_id: str | None = None) -> None:
        super().__init__(reason)
        self.event_id = event_id
