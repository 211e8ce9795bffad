"""Confining paths to the environment's work directory (and the mapped workspace)."""

from __future__ import annotations

import posixpath
import re

from activities.sandbox.provider import WORK_DIR, WORKSPACE_DIR, SandboxPathError

_UNSAFE_NAME = re.compile(r"[^a-z0-9_.-]+")


def resolve(path: str, *, workspace: bool) -> str:
    """``path`` as an absolute path inside the work directory (or the mapped workspace).

    Raises:
        SandboxPathError: Empty, containing NUL, or leading outside of them.
    """
    if not path or "\x00" in path:
        raise SandboxPathError("give a path relative to the work directory, e.g. 'notes.txt'")
    full = posixpath.normpath(posixpath.join(WORK_DIR, path))
    roots = [WORK_DIR, *([WORKSPACE_DIR] if workspace else [])]
    if not any(full == root or full.startswith(root + "/") for root in roots):
        where = " or /workspace" if workspace else ""
        raise SandboxPathError(f"{path!r} is outside the work directory: stay under /work{where}")
    return full


def resource_name(agent: str) -> str:
    """The container and volume name of ``agent``'s environment (Docker's name alphabet)."""
    safe = _UNSAFE_NAME.sub("-", agent.lower()).strip("-.") or "agent"
    return f"persyn-sandbox-{safe[:64]}"
