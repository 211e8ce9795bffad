"""The execution provider interface: an agent's isolated environment, as a few async calls.

A provider provisions an agent's environment on first use, runs commands in it under a
wall-clock limit with capped output, reads, writes and lists files in its work directory with
size caps, and tears it all down with the agent. Paths are relative to the work directory
(``/work``), under ``/workspace`` when a host workspace is mapped, or under
``/shared/{name}`` for a shared workspace the agent is a member of. There is no unsandboxed
host fallback: a provider that cannot reach its engine says so through :meth:`check` and every
other call raises :class:`SandboxUnavailableError`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from schemas.sandbox import Availability, CommandResult, FileEntry
from schemas.workspaces import SHARED_DIR as SHARED_DIR  # a root like the two below

WORK_DIR = "/work"
"""The environment's writable work directory, kept across commands and restarts."""

WORKSPACE_DIR = "/workspace"
"""Where a configured host workspace is mapped (the only host path the sandbox sees)."""


class SandboxError(Exception):
    """A sandbox failure the caller (or the model) should read."""


class SandboxUnavailableError(SandboxError):
    """No engine answers, or the sandbox is switched off: nothing runs anywhere else."""


class SandboxConfigError(SandboxError):
    """An isolation setting the engine cannot honour; the message names the setting."""


class SandboxPathError(SandboxError):
    """A path outside the work directory, missing, or of the wrong kind."""


class FileTooLargeError(SandboxError):
    """A file past the configured size cap, refused rather than read or written."""


@dataclass(frozen=True)
class FileState:
    """One file as a snapshot saw it (``activities/sandbox/snapshots.py``)."""

    digest: str
    size: int
    content: bytes | None = None
    """The bytes, when the file was small enough to keep."""


class ExecutionProvider(ABC):
    """An execution environment per agent. Every method is safe to call concurrently."""

    name: ClassVar[str]

    @abstractmethod
    async def check(self) -> Availability:
        """Whether the engine answers and the settings fit it; never raises."""

    @abstractmethod
    async def validate(self) -> None:
        """Check the isolation settings against the engine, at startup.

        Raises:
            SandboxConfigError: The network or runtime does not exist there (names the setting).
            SandboxUnavailableError: No engine answers.
        """

    @abstractmethod
    async def provision(self, agent: str) -> None:
        """Create ``agent``'s environment unless it runs already (the other calls do it too)."""

    @abstractmethod
    async def run(
        self, agent: str, command: str, *, timeout_seconds: float | None = None
    ) -> CommandResult:
        """Run ``command`` with ``sh -c`` in the work directory.

        A command past its wall-clock limit (the setting unless ``timeout_seconds``) is killed
        and reported with ``timed_out``; output past the cap is cut and ``truncated`` set.
        """

    @abstractmethod
    async def read_file(self, agent: str, path: str) -> bytes:
        """The file's bytes.

        Raises:
            FileTooLargeError: Larger than the cap (nothing is transferred).
            SandboxPathError: Outside the work directory, missing, or not a file.
        """

    @abstractmethod
    async def write_file(self, agent: str, path: str, content: bytes) -> int:
        """Write ``content`` (creating parent directories); returns the bytes written.

        Raises:
            FileTooLargeError: ``content`` is larger than the cap.
            SandboxPathError: Outside the work directory.
        """

    @abstractmethod
    async def list_files(self, agent: str, path: str = ".") -> list[FileEntry]:
        """The entries of a directory, by name."""

    @abstractmethod
    async def teardown(self, agent: str) -> None:
        """Remove ``agent``'s environment and its files; nothing left behind is an error."""

    async def snapshot(self, agent: str, root: str) -> dict[str, FileState]:
        """Every regular file under the absolute ``root`` (for attributing shared changes).

        Raises:
            SandboxError: This provider cannot, or the folder is past the snapshot's caps.
        """
        raise SandboxError(f"the {self.name} provider cannot attribute shared changes")

    async def create_shared_volume(self, volume: str, *, workspace: str) -> None:
        """Create a shared workspace's storage, owned by the sandbox user.

        Raises:
            SandboxUnavailableError: No engine answers.
            SandboxError: This provider has no shared workspaces, or the engine refused.
        """
        raise SandboxError(f"the {self.name} provider has no shared workspaces")

    async def remove_shared_volume(self, volume: str) -> None:
        """Remove a shared workspace's storage (unmounted from every sandbox); none is no error.

        Raises:
            SandboxUnavailableError: No engine answers.
            SandboxError: This provider has no shared workspaces, or the engine refused.
        """
        raise SandboxError(f"the {self.name} provider has no shared workspaces")

    async def close(self) -> None:
        """Release the engine connection."""
