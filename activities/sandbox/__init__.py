"""Sandboxed execution: an isolated environment per agent, behind a pluggable provider.

Build one with :func:`build_provider`; ask :func:`sandbox_availability` whether the
code-execution tool can be offered (and why not, in one line).
"""

from __future__ import annotations

from activities.sandbox.factory import build_provider, sandbox_availability, teardown_environment
from activities.sandbox.provider import (
    WORK_DIR,
    WORKSPACE_DIR,
    ExecutionProvider,
    FileTooLargeError,
    SandboxConfigError,
    SandboxError,
    SandboxPathError,
    SandboxUnavailableError,
)

__all__ = [
    "WORKSPACE_DIR",
    "WORK_DIR",
    "ExecutionProvider",
    "FileTooLargeError",
    "SandboxConfigError",
    "SandboxError",
    "SandboxPathError",
    "SandboxUnavailableError",
    "build_provider",
    "sandbox_availability",
    "teardown_environment",
]
