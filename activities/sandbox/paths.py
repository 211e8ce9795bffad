"""Confining paths to the environment's work directory (the mapped and shared workspaces)."""

from __future__ import annotations

import posixpath
import re

from activities.sandbox.provider import SHARED_DIR, WORK_DIR, WORKSPACE_DIR, SandboxPathError

_UNSAFE_NAME = re.compile(r"[^a-z0-9_.-]+")
_SHARED = re.compile(rf"^{SHARED_DIR}/([a-z][a-z0-9-]{{0,30}}[a-z0-9])(?:/|$)")


def shared_root(full: str) -> str | None:
    """``/shared/{name}`` when the normalised absolute ``full`` lies in (or is) one, else None."""
    match = _SHARED.match(full)
    return f"{SHARED_DIR}/{match.group(1)}" if match else None


def shared_name(full: str) -> str | None:
    """The shared workspace the normalised absolute ``full`` lies in, if any."""
    match = _SHARED.match(full)
    return match.group(1) if match else None


def resolve(path: str, *, workspace: bool) -> str:
    """``path`` as an absolute path inside the work directory (or a mapped or shared workspace).

    A path under ``/shared/{name}`` passes here whatever the agent's memberships: a container
    has only its own workspaces mounted (and a read-only root), and the delegated tools refuse
    a workspace the agent is not a member of before they get here.

    Raises:
        SandboxPathError: Empty, containing NUL, or leading outside of them.
    """
    if not path or "\x00" in path:
        raise SandboxPathError("give a path relative to the work directory, e.g. 'notes.txt'")
    full = posixpath.normpath(posixpath.join(WORK_DIR, path))
    roots = [WORK_DIR, *([WORKSPACE_DIR] if workspace else [])]
    if shared_root(full) is None and not any(
        full == root or full.startswith(root + "/") for root in roots
    ):
        where = " or /workspace" if workspace else ""
        raise SandboxPathError(f"{path!r} is outside the work directory: stay under /work{where}")
    return full


def resource_name(agent: str) -> str:
    """The container and volume name of ``agent``'s environment (Docker's name alphabet)."""
    safe = _UNSAFE_NAME.sub("-", agent.lower()).strip("-.") or "agent"
    return f"persyn-sandbox-{safe[:64]}"
