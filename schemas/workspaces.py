"""Shared workspaces on the wire: names, members and their modes, and the change log.

A shared workspace is a folder several agents' sandboxes mount at ``/shared/{name}``, each
member read-write or read-only. Every change an agent's sandbox makes there is attributed to
it in the workspace's change log (docs/tools.md, Shared workspaces).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, Field, StringConstraints, WithJsonSchema

from schemas.events import Wire
from schemas.ids import AgentHandle, check_handle

SHARED_DIR = "/shared"
"""Where a member's sandbox sees each of its workspaces, as ``/shared/{name}``."""

NAME_PATTERN = r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$"
"""A workspace name: it is a folder name in every member's sandbox and part of a volume name."""

_NAME_RE = re.compile(NAME_PATTERN)


class InvalidWorkspaceError(ValueError):
    """A workspace name or member that cannot be used; the message is one line."""


def check_workspace_name(value: str) -> str:
    """Return ``value`` if it is a valid workspace name, else raise a one-line error."""
    if not isinstance(value, str) or not _NAME_RE.match(value):
        shown = value[:40] + "…" if isinstance(value, str) and len(value) > 40 else value
        raise InvalidWorkspaceError(
            f"workspace name {shown!r} is invalid: use 2-32 lower-case letters, digits or '-', "
            "starting with a letter (e.g. 'essay')"
        )
    return value


WorkspaceName = Annotated[
    str,
    StringConstraints(min_length=2, max_length=32),
    AfterValidator(check_workspace_name),
    WithJsonSchema({"type": "string", "pattern": NAME_PATTERN}),
]
"""A shared workspace's name."""


class Mode(StrEnum):
    """How a member mounts the workspace."""

    READ_WRITE = "rw"
    READ_ONLY = "ro"


class Member(Wire):
    """One agent's membership of a workspace."""

    agent: AgentHandle
    mode: Mode


def parse_member(text: str) -> Member:
    """``handle:rw`` or ``handle:ro`` (``handle`` alone is read-write) as a :class:`Member`.

    Raises:
        InvalidWorkspaceError: Not of that form, in one line saying what to write.
    """
    handle, sep, mode = text.strip().partition(":")
    if sep and mode not in {m.value for m in Mode}:
        raise InvalidWorkspaceError(
            f"member {text[:60]!r}: the mode after ':' must be 'rw' or 'ro' (e.g. 'ada:rw')"
        )
    try:
        check_handle(handle)
    except ValueError as error:
        raise InvalidWorkspaceError(f"member {text[:60]!r}: {error}") from None
    return Member(agent=handle, mode=Mode(mode) if sep else Mode.READ_WRITE)


class WorkspacePublic(Wire):
    """A workspace as the operator and its members see it."""

    name: WorkspaceName
    volume: str = Field(description="The engine's volume holding the files.")
    created_by: str = Field(description="'operator', or the agent whose invitation made it.")
    created_at: AwareDatetime
    members: list[Member] = Field(default_factory=list)


class ChangeKind(StrEnum):
    """What happened to one file."""

    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"


class WorkspaceChange(Wire):
    """One file changed by one agent's sandbox step, as the change log records it."""

    id: str
    workspace: WorkspaceName
    agent: AgentHandle
    path: str = Field(description="Relative to the workspace's root.")
    kind: ChangeKind
    bytes_before: int = Field(ge=0)
    bytes_after: int = Field(ge=0)
    lines_added: int = Field(ge=0)
    lines_removed: int = Field(ge=0)
    excerpt: str = Field(default="", description="The start of the lines it added, if text.")
    task_id: str | None = Field(default=None, description="The sandbox task that made it.")
    at: AwareDatetime
