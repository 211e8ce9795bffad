"""The Docker provider's contract: first-use provisioning, limits, files, teardown."""

from __future__ import annotations

import docker
import pytest

from activities.sandbox import SandboxPathError
from activities.sandbox.paths import resource_name
from tests.sandbox.conftest import MakeProvider
from tests.sandbox.engine import DockerEngine


async def test_first_use_provisions_a_locked_down_environment(
    make_provider: MakeProvider, agent: str, docker_engine: DockerEngine
) -> None:
    provider = make_provider()
    result = await provider.run(agent, "id -u; pwd; touch /etc/x 2>&1; echo oops >&2; exit 3")
    assert result.exit_code == 3 and result.stderr == "oops\n"
    uid, cwd, touch = result.stdout.splitlines()
    assert (uid, cwd) == ("65534", "/work") and "Read-only file system" in touch

    engine = docker.DockerClient(base_url=docker_engine.host)
    try:
        config = engine.containers.get(resource_name(agent)).attrs["HostConfig"]
    finally:
        engine.close()
    assert config["NetworkMode"] == "none" and config["ReadonlyRootfs"]
    assert config["CapDrop"] == ["ALL"] and not config["CapAdd"]
    assert config["Privileged"] is False and "no-new-privileges" in config["SecurityOpt"]
    assert config["Memory"] == config["MemorySwap"] == 256 * 2**20
    assert config["PidsLimit"] == 64 and config["NanoCpus"] == 10**9
    # Only the agent's own volume: no host path.
    assert config["Binds"] == [f"{resource_name(agent)}:/work:rw"]


async def test_files_round_trip_and_stay_inside_the_work_directory(
    make_provider: MakeProvider, agent: str
) -> None:
    provider = make_provider()
    assert await provider.write_file(agent, "notes/today.txt", b"hello\n") == 6
    assert await provider.read_file(agent, "notes/today.txt") == b"hello\n"
    edited = await provider.run(agent, "echo more >> notes/today.txt && cat notes/today.txt")
    assert edited.stdout == "hello\nmore\n"  # written files belong to the sandbox user
    [entry] = await provider.list_files(agent, "notes")
    assert (entry.name, entry.kind, entry.size) == ("today.txt", "file", 11)
    for escape in ("../etc/passwd", "/etc/passwd", "notes/../../tmp/x", ""):
        with pytest.raises(SandboxPathError):
            await provider.read_file(agent, escape)
    with pytest.raises(SandboxPathError, match="does not exist"):
        await provider.read_file(agent, "missing.txt")
    with pytest.raises(SandboxPathError, match="directory"):
        await provider.read_file(agent, "notes")


async def test_a_command_past_its_limit_is_killed_and_the_files_survive(
    make_provider: MakeProvider, agent: str
) -> None:
    provider = make_provider()
    await provider.write_file(agent, "kept.txt", b"kept")
    slow = await provider.run(agent, "sleep 31 & sleep 31", timeout_seconds=1)
    assert slow.timed_out and slow.exit_code is None and slow.duration_seconds < 10
    # The environment was restarted (the background sleep is gone); the volume was not.
    after = await provider.run(agent, "ps | grep -c '[s]leep 31' ; cat kept.txt")
    assert after.stdout.split() == ["0", "kept"]


async def test_output_past_the_cap_is_cut(make_provider: MakeProvider, agent: str) -> None:
    provider = make_provider(output_max_bytes=1000)
    result = await provider.run(agent, "yes | head -c 100000; yes 2>&1 >&2 | head -c 5000 >&2")
    assert result.truncated and result.exit_code == 0
    assert len(result.stdout) == 1000 and result.stdout.startswith("y\ny\n")


async def test_teardown_removes_the_container_and_the_volume(
    make_provider: MakeProvider, agent: str, docker_engine: DockerEngine
) -> None:
    provider = make_provider()
    await provider.write_file(agent, "gone.txt", b"x")
    await provider.teardown(agent)
    engine = docker.DockerClient(base_url=docker_engine.host)
    try:
        name = resource_name(agent)
        assert not engine.containers.list(all=True, filters={"name": name})
        assert not engine.volumes.list(filters={"name": name})
    finally:
        engine.close()
    # Used again, the agent starts from an empty work directory.
    assert await provider.list_files(agent) == []


async def test_a_stopped_or_removed_container_comes_back_with_the_files(
    make_provider: MakeProvider, agent: str, docker_engine: DockerEngine
) -> None:
    provider = make_provider()
    await provider.write_file(agent, "kept.txt", b"kept")
    engine = docker.DockerClient(base_url=docker_engine.host)
    try:
        engine.containers.get(resource_name(agent)).stop(timeout=0)
        assert (await provider.run(agent, "cat kept.txt")).stdout == "kept"
        engine.containers.get(resource_name(agent)).remove(force=True)
        assert (await provider.run(agent, "cat kept.txt")).stdout == "kept"
    finally:
        engine.close()
