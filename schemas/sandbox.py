"""The sandbox on the wire: its settings and what a command or a file operation returns.

The execution provider (``activities/sandbox/``) runs an agent's commands in an isolated
environment. Its isolation settings never fall open: an empty or unknown network or runtime is
refused at startup with the setting's name, and there is no unsandboxed host fallback.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

_DOCKER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# Network modes that are not an isolated network: each shares the host's or another
# container's namespace, so choosing one would be a fall-open.
_OPEN_NETWORKS = {"host", "default"}


class SandboxSettings(BaseModel):
    """Where and how agents' code runs (``PERSYN_SANDBOX__*``, ``[sandbox]`` in persyn.toml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(
        default=True,
        description="Offer sandboxed code execution when an engine answers; off: never.",
    )
    provider: Literal["docker"] = Field(default="docker", description="The execution provider.")
    docker_host: str | None = Field(
        default=None,
        description="Engine address (e.g. unix:///run/docker.sock); default: DOCKER_HOST or the "
        "engine's standard socket.",
    )
    network: str = Field(
        default="none",
        description="'none' (loopback only), or the name of an existing Docker network.",
    )
    runtime: str = Field(
        default="runc", description="OCI runtime registered with the engine, e.g. 'runsc'."
    )
    image: str = Field(
        default="persyn-sandbox:latest",
        description="Image the environment runs; `persyn sandbox image build` makes the default.",
    )
    memory_mb: int = Field(default=256, ge=16, le=65536, description="Memory limit (no swap).")
    pids_limit: int = Field(default=64, ge=8, le=4096, description="Processes and threads.")
    cpus: float = Field(default=1.0, gt=0, le=64, description="CPU share (cores).")
    command_timeout_seconds: float = Field(
        default=60.0, gt=0, le=3600, description="Wall-clock limit of one command."
    )
    output_max_bytes: int = Field(
        default=64_000, ge=256, le=10_000_000, description="Each of stdout and stderr is cut here."
    )
    file_max_bytes: int = Field(
        default=1_000_000, ge=1024, le=100_000_000, description="Largest file read or written."
    )
    tmp_size_mb: int = Field(default=64, ge=1, le=4096, description="Size of the /tmp tmpfs.")
    workspace: Path | None = Field(
        default=None,
        description="A host folder mapped at /workspace; the only host path the sandbox sees.",
    )
    workspace_read_only: bool = Field(
        default=True, description="Map the workspace read-only (false lets the agent write it)."
    )

    @field_validator("network", "runtime")
    @classmethod
    def _isolation_value(cls, value: str, info: ValidationInfo) -> str:
        name = info.field_name
        value = value.strip()
        if not value:
            example = "'none'" if name == "network" else "'runc'"
            raise ValueError(f"empty: name one, e.g. {example} (sandbox.{name})")
        if name == "network" and (value in _OPEN_NETWORKS or value.startswith("container:")):
            raise ValueError(
                f"{value!r} shares another namespace: use 'none' or a named Docker network "
                "(sandbox.network)"
            )
        if not _DOCKER_NAME.match(value):
            raise ValueError(f"{value!r} is not a valid Docker name (sandbox.{name})")
        return value

    @field_validator("workspace")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        if value is not None and not value.expanduser().is_absolute():
            raise ValueError("sandbox.workspace must be an absolute host path")
        return value.expanduser() if value is not None else None


class CommandResult(BaseModel):
    """What one command in the sandbox did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    exit_code: int | None = Field(description="None when the command was killed at its limit.")
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = Field(default=False, description="Output past the cap was dropped.")
    duration_seconds: float = 0.0


class FileEntry(BaseModel):
    """One entry of a sandbox directory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: Literal["file", "directory", "other"]
    size: int


class Availability(BaseModel):
    """Whether sandboxed execution can be offered, and why not in one line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    available: bool
    reason: str = ""
    misconfigured: bool = False
    """An isolation setting the engine lacks: the worker refuses to start, never falls open."""
