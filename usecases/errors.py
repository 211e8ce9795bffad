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
