"""``persyn serve`` as an operator runs it: it serves, and says in one line what is missing."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import httpx

from temporal.devserver import free_port
from tests.harness import Stack, until


def _env(stack: Stack, home: Path, temporal_address: str) -> dict[str, str]:
    return {
        **os.environ,
        "PERSYN_HOME": str(home),
        "PERSYN_DATABASE_URL": stack.dsn,
        "PERSYN_TEMPORAL_ADDRESS": temporal_address,
        "PERSYN_EMBEDDED": "false",
    }


async def test_serve_answers_and_stops_on_ctrl_c(stack: Stack, tmp_path: Path) -> None:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cli.main",
        "serve",
        "--port",
        str(port),
        env=_env(stack, tmp_path, stack.temporal_address),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:

            async def up() -> bool:
                try:
                    return (await http.get("/openapi.json")).status_code == 200
                except httpx.TransportError:
                    return process.returncode is not None

            await until(up)
            assert process.returncode is None
            page = await http.get("/")
            unauthorised = await http.get("/v1/agents/ada/markers/01JD3MB1C2D3E4F5G6H7J8K9M0")
        assert page.status_code == 200 and "Persyn web chat" in page.text
        assert unauthorised.status_code == 401
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), 20)
    assert process.returncode == 0
    assert f"web channel on http://127.0.0.1:{port}/" in err.decode()


async def test_serve_without_temporal_is_one_line(stack: Stack, tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cli.main",
        "serve",
        "--port",
        str(free_port()),
        env=_env(stack, tmp_path, f"127.0.0.1:{free_port()}"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    assert err.decode().startswith("error: cannot reach Temporal at 127.0.0.1:")
    assert len(err.decode().strip().splitlines()) == 1
