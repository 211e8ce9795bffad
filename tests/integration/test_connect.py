"""Connecting to Temporal: a server that is still starting is waited for, a missing one is not."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest

from temporal import devserver
from temporal.client import TemporalUnavailableError, connect
from temporal.devserver import DevServer, free_port
from tests.harness import Stack


async def test_nothing_listening_fails_at_once_with_what_to_do(stack: Stack) -> None:
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(TemporalUnavailableError, match="run `persyn up`"):
        await connect(stack.settings(), address=address)
    assert time.monotonic() - started < 10  # no grace asked for: the one attempt's own timeout


async def test_a_server_that_starts_late_is_connected_to_within_the_grace(
    stack: Stack, tmp_path: Path
) -> None:
    server = DevServer(port=free_port(), ui_port=None, db_file=None, log_file=tmp_path / "t.log")
    address = f"127.0.0.1:{server.port}"
    attempt = asyncio.create_task(connect(stack.settings(), address=address, ready_within=30))
    await asyncio.sleep(0.5)
    assert not attempt.done()  # nothing answers yet, and it keeps trying
    process = await asyncio.to_thread(server.start, detached=False)
    try:
        client = await attempt
        info = await client.workflow_service.get_system_info(GetSystemInfoRequest())
        assert info.server_version
    finally:
        process.terminate()
        process.wait(10)


def test_a_port_taken_after_it_was_found_free_is_given_up_for_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between finding a port free and the server binding it, something else took it: a test
    # session's server died so, and every test after it failed.
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ports = iter([taken.getsockname()[1], free_port()])
    monkeypatch.setattr(devserver, "free_port", lambda: next(ports))
    wanted = DevServer(port=0, ui_port=None, db_file=None, log_file=tmp_path / "t.log")
    try:
        server, process = wanted.start_on_free_port(detached=False, attempts=2)
        try:
            assert server.port != taken.getsockname()[1] and process.poll() is None
        finally:
            process.terminate()
            process.wait(10)
    finally:
        taken.close()
