"""Choosing the execution provider from settings, and saying whether it can be offered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from activities.sandbox.provider import ExecutionProvider, SandboxError
from schemas.sandbox import Availability, SandboxSettings

if TYPE_CHECKING:
    from activities.sandbox.docker import Mounts, SharedMounts


def build_provider(
    settings: SandboxSettings,
    *,
    mounts: Mounts | None = None,
    shared: SharedMounts | None = None,
) -> ExecutionProvider:
    """The configured provider; it connects to its engine on first use.

    ``mounts`` names each agent's extra host folders (its skill library at ``/skills``);
    ``shared`` looks up its shared workspaces' volumes before each use.
    """
    # Imported here so that a deployment without the sandbox never loads the engine's SDK.
    from activities.sandbox.docker import DockerProvider

    return DockerProvider(settings, mounts=mounts, shared=shared)


async def sandbox_availability(settings: SandboxSettings) -> Availability:
    """Whether sandboxed code execution is available, and if not why, in one line.

    Never raises: a switched-off sandbox, a missing SDK, no engine, a missing image and an
    isolation setting the engine lacks all come back as ``available=False`` with the reason.
    """
    if not settings.enabled:
        return Availability(available=False, reason="sandbox switched off (sandbox.enabled)")
    try:
        provider = build_provider(settings)
    except ImportError as error:
        return Availability(available=False, reason=f"docker SDK not installed ({error.name})")
    try:
        return await provider.check()
    finally:
        await provider.close()


async def teardown_environment(settings: SandboxSettings, agent: str) -> str | None:
    """Remove ``agent``'s execution environment (container and volume) with the agent.

    Returns:
        ``None`` when it is gone (or there was none); otherwise, in one line, why it could not
        be removed (no engine answers, the SDK is missing), so the caller can say so.
    """
    if not settings.enabled:
        return "sandbox switched off (sandbox.enabled): no environment to remove"
    try:
        provider = build_provider(settings)
    except ImportError as error:
        return f"docker SDK not installed ({error.name})"
    try:
        await provider.teardown(agent)
    except SandboxError as error:
        return str(error)
    finally:
        await provider.close()
    return None
