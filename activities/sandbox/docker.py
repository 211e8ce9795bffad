"""The Docker provider: one long-lived container per agent over a per-agent volume.

The container runs a shell that only sleeps; each command is a ``docker exec`` into it, so a
warm command costs one exec round trip. The agent's files live in a named volume mounted at
``/work``: the container can be killed and recreated (after a runaway command, an image
change, an engine restart) without losing them, and teardown removes both. Isolation is the
default and cannot be loosened by accident: no network (or a named one), read-only root, a
non-root user, every capability dropped, no new privileges, memory (without swap), pids and
CPU limits, an explicit environment, and no host path but the configured workspace.

The ``docker`` SDK blocks, so every engine call runs on a thread.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import io
import json
import math
import posixpath
import tarfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import docker
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from activities.sandbox.paths import resolve, resource_name, shared_root
from activities.sandbox.provider import (
    SHARED_DIR,
    WORK_DIR,
    WORKSPACE_DIR,
    ExecutionProvider,
    FileState,
    FileTooLargeError,
    SandboxConfigError,
    SandboxError,
    SandboxPathError,
    SandboxUnavailableError,
)
from activities.sandbox.reaping import CommandGroups, command_argv, sweep_argv
from activities.sandbox.snapshots import read_tree
from schemas.sandbox import Availability, CommandResult, FileEntry, SandboxSettings

SANDBOX_UID = "65534:65534"
"""``nobody``: commands never run as root, even inside the container."""
_SANDBOX_USER = SANDBOX_UID.split(":")[0]
"""Each command runs as this user with a group of its own (``activities/sandbox/reaping.py``)."""

LABEL = "persyn.sandbox"
MOUNTS_LABEL = "persyn.mounts"
"""A digest of the container's mounts: a container whose mounts changed is made anew."""
WORKSPACE_LABEL = "persyn.workspace"
"""On a shared workspace's volume: the workspace's name."""
_KEEPALIVE = ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"]
_ENVIRONMENT = {
    "HOME": WORK_DIR,
    "TMPDIR": "/tmp",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
}
"""The whole environment inside: nothing of the worker's (no keys, no tokens) reaches it."""
Mounts = Callable[[str], dict[str, dict[str, str]]]
"""An agent's extra host folders: host path to ``{"bind": ..., "mode": "ro"|"rw"}``."""
SharedMounts = Callable[[str], Awaitable[dict[str, dict[str, str]]]]
"""An agent's shared workspaces, looked up before each use: volume to bind and mode."""
_GRACE_SECONDS = 10.0
_MAX_ENTRIES = 1000
_DIR_BIT = 1 << 31  # Go's os.ModeDir, as the engine reports a path's mode


class DockerProvider(ExecutionProvider):
    """Agents' environments in a Docker engine (see the module docstring)."""

    name = "docker"

    def __init__(
        self,
        settings: SandboxSettings,
        *,
        mounts: Mounts | None = None,
        shared: SharedMounts | None = None,
    ) -> None:
        self._settings = settings
        # Per-agent host folders besides the workspace: the agent's skill library at /skills.
        self._mounts = mounts
        # Per-agent shared workspaces (docs/tools.md): asked before each use, so a membership
        # given or taken away changes the container's mounts at its next command.
        self._shared = shared
        self._client: docker.DockerClient | None = None
        self._locks: dict[str, asyncio.Lock] = {}
        self._validated = False
        self._groups = CommandGroups()

    # -- engine ------------------------------------------------------------------------------

    def _docker(self) -> docker.DockerClient:
        if self._client is None:
            try:
                if self._settings.docker_host:
                    client = docker.DockerClient(base_url=self._settings.docker_host, timeout=30)
                else:
                    client = docker.from_env(timeout=30)
                client.ping()
            except DockerException as error:
                where = self._settings.docker_host or "DOCKER_HOST or the default socket"
                raise SandboxUnavailableError(
                    f"no Docker engine answers at {where}: start one, or set sandbox.docker_host"
                ) from error
            self._client = client
        return self._client

    async def close(self) -> None:
        """Close the engine connection (a later call reconnects)."""
        client, self._client = self._client, None
        if client is not None:
            await asyncio.to_thread(client.close)

    async def check(self) -> Availability:
        """Whether the engine answers, the settings fit it and the image exists."""
        try:
            await self.validate()
            await asyncio.to_thread(self._docker().images.get, self._settings.image)
        except ImageNotFound:
            return Availability(
                available=False,
                reason=f"image {self._settings.image!r} not found: run `persyn sandbox image "
                "build` or name another in sandbox.image",
            )
        except SandboxConfigError as error:
            return Availability(available=False, reason=str(error), misconfigured=True)
        except SandboxUnavailableError as error:
            return Availability(available=False, reason=str(error))
        except DockerException as error:
            return Availability(available=False, reason=f"Docker engine: {_first_line(error)}")
        return Availability(available=True)

    async def validate(self) -> None:
        """Refuse a network or runtime the engine does not have, naming the setting."""
        await asyncio.to_thread(self._validate)

    def _validate(self) -> None:
        client = self._docker()
        runtimes = client.info().get("Runtimes") or {}
        if self._settings.runtime not in runtimes:
            raise SandboxConfigError(
                f"sandbox.runtime {self._settings.runtime!r} is not registered with the engine "
                f"(it has: {', '.join(sorted(runtimes))})"
            )
        if self._settings.network != "none":
            try:
                client.networks.get(self._settings.network)
            except NotFound as error:
                raise SandboxConfigError(
                    f"sandbox.network {self._settings.network!r} does not exist: create it "
                    "with `docker network create` or use 'none'"
                ) from error

    # -- environments ------------------------------------------------------------------------

    async def provision(self, agent: str) -> None:
        """Create (or restart) ``agent``'s container and volume unless it runs."""
        await self._container(agent)

    async def _container(self, agent: str) -> Any:
        shared = await self._shared(agent) if self._shared is not None else {}
        lock = self._locks.setdefault(agent, asyncio.Lock())
        async with lock:
            return await asyncio.to_thread(self._ensure, agent, shared)

    def _ensure(self, agent: str, shared: dict[str, dict[str, str]]) -> Any:
        if not self._validated:  # nothing starts on an isolation setting the engine lacks
            self._validate()
            self._validated = True
        client = self._docker()
        name = resource_name(agent)
        options = self._options(name, agent, shared)
        try:
            container = client.containers.get(name)
        except NotFound:
            container = None
        if container is not None:
            if container.labels.get(MOUNTS_LABEL) == options["labels"][MOUNTS_LABEL]:
                if container.status != "running":
                    container.start()
                return container
            # Its mounts changed (a workspace given or taken away): a container keeps the
            # mounts it was made with, so it is made anew over the same volume. A command
            # running in it ends; its step is retried on the new one.
            with contextlib.suppress(NotFound):
                container.remove(force=True)
        self._ensure_volume(client, name)
        try:
            return client.containers.run(self._settings.image, _KEEPALIVE, **options)
        except APIError as error:
            if error.status_code == 409:  # another worker created it first
                return client.containers.get(name)
            raise

    def _options(self, name: str, agent: str, shared: dict[str, dict[str, str]]) -> dict[str, Any]:
        s = self._settings
        volumes: dict[str, dict[str, str]] = {name: {"bind": WORK_DIR, "mode": "rw"}}
        if self._mounts is not None:
            volumes.update(self._mounts(agent))
        if s.workspace is not None:
            mode = "ro" if s.workspace_read_only else "rw"
            volumes[str(s.workspace)] = {"bind": WORKSPACE_DIR, "mode": mode}
        for volume, bind in shared.items():
            if shared_root(bind["bind"]) is None:  # never over /work, /workspace or /skills
                raise SandboxConfigError(f"a shared mount must sit under {SHARED_DIR}: {bind}")
            volumes[volume] = bind
        digest = hashlib.sha256(json.dumps(volumes, sort_keys=True).encode()).hexdigest()[:32]
        return {
            "name": name,
            "detach": True,
            "labels": {LABEL: "1", MOUNTS_LABEL: digest},
            "hostname": "sandbox",
            "user": SANDBOX_UID,
            "working_dir": WORK_DIR,
            "environment": _ENVIRONMENT,
            "network_mode": s.network,
            "runtime": s.runtime,
            "read_only": True,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "mem_limit": f"{s.memory_mb}m",
            "memswap_limit": f"{s.memory_mb}m",
            "pids_limit": s.pids_limit,
            "nano_cpus": int(s.cpus * 1e9),
            "tmpfs": {"/tmp": f"size={s.tmp_size_mb}m,mode=1777"},
            "volumes": volumes,
        }

    def _ensure_volume(
        self, client: docker.DockerClient, name: str, labels: dict[str, str] | None = None
    ) -> None:
        try:
            client.volumes.get(name)
            return
        except NotFound:
            client.volumes.create(name, labels=labels or {LABEL: "1"})
        # A fresh volume belongs to root; hand it to the sandbox user once, with the one
        # capability that takes, and nothing else (any image: it need not own /work itself).
        client.containers.run(
            self._settings.image,
            ["chown", SANDBOX_UID, WORK_DIR],
            remove=True,
            user="0:0",
            cap_drop=["ALL"],
            cap_add=["CHOWN"],
            network_mode="none",
            runtime=self._settings.runtime,
            read_only=True,
            environment=_ENVIRONMENT,
            volumes={name: {"bind": WORK_DIR, "mode": "rw"}},
        )

    async def create_shared_volume(self, volume: str, *, workspace: str) -> None:
        """Create a shared workspace's volume, owned by the sandbox user (kept if it exists).

        Raises:
            SandboxUnavailableError: No engine answers.
            SandboxError: The engine refused (the image is missing, say), in one line.
        """
        try:
            await asyncio.to_thread(
                self._ensure_volume, self._docker(), volume, {WORKSPACE_LABEL: workspace}
            )
        except ImageNotFound as error:
            raise SandboxError(
                f"image {self._settings.image!r} not found: run `persyn sandbox image build`"
            ) from error
        except DockerException as error:
            raise SandboxError(f"Docker engine: {_first_line(error)}") from error

    async def remove_shared_volume(self, volume: str) -> None:
        """Remove a shared workspace's volume, and first every container that mounts it.

        Each such container is made anew at its agent's next command (without the volume, once
        its membership is gone); a command running in one ends. A missing volume is no error.
        """

        def remove() -> None:
            client = self._docker()
            for container in client.containers.list(all=True, filters={"volume": volume}):
                with contextlib.suppress(NotFound):
                    container.remove(force=True)
            with contextlib.suppress(NotFound):
                client.volumes.get(volume).remove(force=True)

        try:
            await asyncio.to_thread(remove)
        except DockerException as error:
            raise SandboxError(f"Docker engine: {_first_line(error)}") from error

    async def teardown(self, agent: str) -> None:
        """Remove the agent's container and volume."""
        lock = self._locks.setdefault(agent, asyncio.Lock())
        async with lock:
            await asyncio.to_thread(self._teardown, resource_name(agent))
        self._locks.pop(agent, None)

    def _teardown(self, name: str) -> None:
        client = self._docker()
        try:
            with contextlib.suppress(NotFound):
                client.containers.get(name).remove(force=True)
            with contextlib.suppress(NotFound):
                client.volumes.get(name).remove(force=True)
        except DockerException as error:
            raise SandboxError(f"Docker engine: {_first_line(error)}") from error

    # -- commands ----------------------------------------------------------------------------

    async def run(
        self, agent: str, command: str, *, timeout_seconds: float | None = None
    ) -> CommandResult:
        """Run ``command`` under ``timeout -s KILL`` inside; a runaway restarts the container.

        When it ends, every process it started ends too, however it detached
        (``activities/sandbox/reaping.py``).
        """
        limit = timeout_seconds or self._settings.command_timeout_seconds
        started = time.monotonic()
        try:
            result = await self._attempt(agent, command, limit)
        except APIError:
            # The exec could not start (the container stopped, or no pids left): a fresh
            # container, same files, one more try.
            await self._restart(agent)
            try:
                result = await self._attempt(agent, command, limit)
            except APIError as error:
                return CommandResult(
                    exit_code=None,
                    stdout="",
                    stderr=f"the sandbox could not run it: {_first_line(error)}",
                    duration_seconds=time.monotonic() - started,
                )
        except TimeoutError:
            # The limit inside did not end it; restarting the container does.
            await self._restart(agent)
            return CommandResult(
                exit_code=None,
                stdout="",
                stderr=f"killed: the command outlived its {limit:g} s limit",
                timed_out=True,
                duration_seconds=time.monotonic() - started,
            )
        if result.timed_out:
            # Whatever it left running in the background (a fork bomb's children) dies too.
            await self._restart(agent)
        return result

    async def _attempt(self, agent: str, command: str, limit: float) -> CommandResult:
        container = await self._container(agent)
        # Without the limit inside, the deadline out here is the limit itself.
        grace = _GRACE_SECONDS if self._limit_inside else 0.0
        streams: list[Any] = []
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(self._exec, container.id, command, limit, streams),
                timeout=limit + grace,
            )
        except TimeoutError:
            # The thread reading the output would otherwise wait for good on an exec the
            # runtime lost (gVisor does, now and then), and a few such threads starve every
            # later engine call of the pool: closing the stream ends its read.
            for stream in streams:
                with contextlib.suppress(Exception):
                    stream.close()
            raise

    @property
    def _limit_inside(self) -> bool:
        # gVisor (runsc 2022-12, Debian 12) loses its sandbox when a non-root `timeout` runs
        # its command ("containerManager.WaitPID failed: EOF"); there the limit is kept from
        # outside only, by restarting the container at the deadline.
        return self._settings.runtime != "runsc"

    async def _restart(self, agent: str) -> None:
        lock = self._locks.setdefault(agent, asyncio.Lock())
        async with lock:
            await asyncio.to_thread(self._kill_and_start, resource_name(agent))

    def _kill_and_start(self, name: str) -> None:
        with contextlib.suppress(NotFound):  # gone: recreated on next use
            self._docker().containers.get(name).restart(timeout=0)

    def _exec(
        self, container_id: str, command: str, limit: float, streams: list[Any]
    ) -> CommandResult:
        group = self._groups.take()
        try:
            return self._exec_as(container_id, command, limit, streams, group)
        finally:
            self._groups.give_back(group)

    def _exec_as(
        self, container_id: str, command: str, limit: float, streams: list[Any], group: int
    ) -> CommandResult:
        api = self._docker().api
        started = time.monotonic()
        # With the limit inside, the command ends on time even if this worker dies.
        argv = command_argv(
            command, group, limit_seconds=math.ceil(limit) if self._limit_inside else None
        )
        exec_id = api.exec_create(
            container_id,
            argv,
            user=f"{_SANDBOX_USER}:{group}",
            workdir=WORK_DIR,
            environment=_ENVIRONMENT,
        )["Id"]
        cap = self._settings.output_max_bytes
        out, err = bytearray(), bytearray()
        truncated = False
        stream = api.exec_start(exec_id, stream=True, demux=True)
        streams.append(stream)  # for the caller to close past the deadline
        for chunk_out, chunk_err in stream:
            # Past the cap the stream is still drained (the command runs on), but not kept.
            for buffer, chunk in ((out, chunk_out), (err, chunk_err)):
                if chunk:
                    room = cap - len(buffer)
                    buffer += chunk[: max(room, 0)]
                    truncated = truncated or len(chunk) > room
        exit_code = api.exec_inspect(exec_id).get("ExitCode")
        elapsed = time.monotonic() - started
        timed_out = exit_code in (124, 137) and elapsed >= limit
        if not timed_out and (exit_code is None or exit_code >= 128):
            # Killed by a signal: perhaps the wrapper itself, before its sweep (a timed-out
            # command's container is restarted instead).
            self._sweep(container_id, group)
        return CommandResult(
            exit_code=None if timed_out else exit_code,
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            timed_out=timed_out,
            truncated=truncated,
            duration_seconds=elapsed,
        )

    def _sweep(self, container_id: str, group: int) -> None:
        """End every process of ``group`` from a fresh exec; failing that, restart."""
        api = self._docker().api
        try:
            exec_id = api.exec_create(
                container_id, sweep_argv(group), user=SANDBOX_UID, workdir=WORK_DIR
            )["Id"]
            api.exec_start(exec_id)
        except APIError:
            # No exec starts (no pids left, say): only a restart still ends the group's work.
            with contextlib.suppress(NotFound):
                api.restart(container_id, timeout=0)

    # -- files -------------------------------------------------------------------------------

    async def read_file(self, agent: str, path: str) -> bytes:
        """The file's bytes; a file past the cap is refused before any byte moves."""
        full = resolve(path, workspace=self._settings.workspace is not None)
        container = await self._container(agent)
        return await asyncio.to_thread(self._read, container, path, full)

    def _read(self, container: Any, path: str, full: str) -> bytes:
        cap = self._settings.file_max_bytes
        stat = self._stat(container.id, path, full)
        if stat["mode"] & _DIR_BIT:
            raise SandboxPathError(f"{path!r} is a directory: list it instead")
        if stat["size"] > cap:
            raise FileTooLargeError(
                f"{path!r} is {stat['size']:,} bytes, past the {cap:,}-byte read cap: read a "
                "part of it with a command (head, tail, grep)"
            )
        stream, _ = container.get_archive(full)
        data = b"".join(stream)
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            member = archive.next()
            extracted = archive.extractfile(member) if member is not None else None
            if extracted is None:
                raise SandboxPathError(f"{path!r} is not a regular file")
            return extracted.read(cap + 1)[:cap]

    def _stat(self, container_id: str, path: str, full: str) -> dict[str, Any]:
        # The engine's HEAD on the archive endpoint stats the path without sending its bytes;
        # the SDK only offers the GET, which would start streaming a 100 MB file.
        api = self._docker().api
        response = api.head(
            api._url("/containers/{0}/archive", container_id), params={"path": full}
        )
        if response.status_code == 404:
            raise SandboxPathError(f"{path!r} does not exist")
        response.raise_for_status()
        header = response.headers.get("X-Docker-Container-Path-Stat", "")
        stat: dict[str, Any] = json.loads(base64.b64decode(header))
        return stat

    async def write_file(self, agent: str, path: str, content: bytes) -> int:
        """Write ``content`` at ``path``, owned by the sandbox user, parents created."""
        cap = self._settings.file_max_bytes
        if len(content) > cap:
            raise FileTooLargeError(
                f"{len(content):,} bytes is past the {cap:,}-byte write cap: write less, or "
                "generate the file with a command"
            )
        full = resolve(path, workspace=self._settings.workspace is not None)
        root = shared_root(full) or (
            WORKSPACE_DIR if full.startswith(WORKSPACE_DIR + "/") else WORK_DIR
        )
        if full == root:
            raise SandboxPathError(f"{path!r} is the work directory itself: name a file in it")
        container = await self._container(agent)
        archive = _tar(posixpath.relpath(full, root), content)
        try:
            await asyncio.to_thread(container.put_archive, root, archive)
        except APIError as error:
            raise SandboxPathError(f"cannot write {path!r}: {_first_line(error)}") from error
        return len(content)

    async def snapshot(self, agent: str, root: str) -> dict[str, FileState]:
        """Every regular file under the absolute ``root``: digest, size, and small files' bytes.

        The tree is streamed from the engine, never held whole; past the snapshot's caps it
        raises :class:`SandboxError` rather than return a partial picture.
        """
        container = await self._container(agent)
        return await asyncio.to_thread(self._snapshot, container, root)

    def _snapshot(self, container: Any, root: str) -> dict[str, FileState]:
        try:
            stream, _ = container.get_archive(root)
        except NotFound:
            return {}
        except DockerException as error:
            raise SandboxError(f"cannot read {root}: {_first_line(error)}") from error
        return read_tree(_ChunkReader(stream))

    async def list_files(self, agent: str, path: str = ".") -> list[FileEntry]:
        """The entries of a directory (at most 1000), by name."""
        full = resolve(path, workspace=self._settings.workspace is not None)
        quoted = full.replace("'", "'\\''")
        result = await self.run(
            agent,
            f"LC_ALL=C find '{quoted}' -mindepth 1 -maxdepth 1 -exec stat -c '%s/%F/%n' {{}} +",
            timeout_seconds=min(30.0, self._settings.command_timeout_seconds),
        )
        if result.exit_code != 0:
            raise SandboxPathError(f"cannot list {path!r}: {result.stderr.strip()[:200]}")
        entries = [_entry(line) for line in result.stdout.splitlines() if line.count("/") >= 2]
        return sorted(entries, key=lambda entry: entry.name)[:_MAX_ENTRIES]


class _ChunkReader(io.RawIOBase):
    """The engine's archive chunks as a file, for ``tarfile``'s stream mode."""

    def __init__(self, chunks: Any) -> None:
        self._chunks = iter(chunks)
        self._left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._left:
            try:
                self._left = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(buffer), len(self._left))
        buffer[:size] = self._left[:size]
        self._left = self._left[size:]
        return size


def _entry(line: str) -> FileEntry:
    size, kind, name = line.split("/", 2)
    return FileEntry(
        name=posixpath.basename(name),
        kind="directory" if kind == "directory" else "file" if "regular" in kind else "other",
        size=int(size) if size.isdigit() else 0,
    )


def _tar(relative: str, content: bytes) -> bytes:
    """A tar of one file and its parent directories, all owned by the sandbox user."""
    uid, gid = (int(part) for part in SANDBOX_UID.split(":"))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        parts = relative.split("/")
        for depth in range(1, len(parts)):
            folder = tarfile.TarInfo("/".join(parts[:depth]))
            folder.type, folder.mode, folder.uid, folder.gid = tarfile.DIRTYPE, 0o755, uid, gid
            archive.addfile(folder)
        info = tarfile.TarInfo(relative)
        info.size, info.mode, info.uid, info.gid = len(content), 0o644, uid, gid
        info.mtime = int(time.time())
        archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__
