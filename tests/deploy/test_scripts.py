"""The compose stack's shell scripts, run for real with the `temporal` CLI against dev servers.

The containers run these with the same CLI (admin-tools image, worker image); here they run
under the host's POSIX sh, which is as strict as the containers' shells.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from contract.names import SEARCH_ATTRIBUTES
from temporal.devserver import free_port, port_open, temporal_binary
from tests.harness import Harness, Stack

ROOT = Path(__file__).resolve().parents[2]
REGISTER = ROOT / "deploy" / "register-search-attributes.sh"
HEALTHCHECK = ROOT / "deploy" / "worker-healthcheck.sh"
DEADLINE = 30.0


def script_env(**values: str) -> dict[str, str]:
    """The environment a container would give the script: the CLI on PATH, plus ``values``."""
    path = f"{temporal_binary().parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    return {"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), **values}


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dev server with no custom search attributes, as a fresh production cluster starts."""
    port = free_port()
    log = tmp_path_factory.mktemp("bare-temporal") / "temporal.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(temporal_binary()),
                "server",
                "start-dev",
                "--headless",
                "--ip",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warn",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + DEADLINE
    while not port_open(port):
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "the dev server did not open its port"
        time.sleep(0.05)
    yield f"127.0.0.1:{port}"
    process.terminate()
    process.wait(10)


def registration_args() -> list[str]:
    """The arguments docker-compose.yml passes the registration script."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return [str(arg) for arg in compose["services"]["register-search-attributes"]["command"]]


def register(address: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(REGISTER), *args],
        env=script_env(TEMPORAL_ADDRESS=address, TEMPORAL_NAMESPACE="default"),
        capture_output=True,
        text=True,
        timeout=DEADLINE * 3,
    )


def custom_attributes(address: str) -> dict[str, str]:
    listing = subprocess.run(
        [
            str(temporal_binary()),
            "operator",
            "search-attribute",
            "list",
            "--address",
            address,
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=DEADLINE,
    )
    found: dict[str, str] = json.loads(listing.stdout).get("customAttributes", {})
    return found


def test_registration_adds_every_persyn_attribute_once(bare_server: str) -> None:
    assert not any(key.name in custom_attributes(bare_server) for key in SEARCH_ATTRIBUTES)

    first = register(bare_server, *registration_args())

    assert first.returncode == 0, first.stderr
    attributes = custom_attributes(bare_server)
    for key in SEARCH_ATTRIBUTES:
        # Each with the type the code declares (PersynGuardrails is a keyword list).
        kind = key.indexed_value_type.name  # KEYWORD or KEYWORD_LIST
        assert attributes[key.name] == f"INDEXED_VALUE_TYPE_{kind}", key.name
        label = kind.title().replace("_", "")
        assert f"{key.name} ({label}) registered" in first.stdout

    # Idempotent: a second run (every `docker compose up`) changes nothing and succeeds.
    second = register(bare_server, *registration_args())
    assert second.returncode == 0, second.stderr
    assert second.stdout.count("already registered") == len(SEARCH_ATTRIBUTES)
    assert custom_attributes(bare_server) == attributes


def test_registration_refuses_to_change_a_type(bare_server: str) -> None:
    # A name of its own, so the test holds in any order with the one above.
    assert register(bare_server, "PersynScratch=Keyword").returncode == 0

    run = register(bare_server, "PersynScratch=Text")

    assert run.returncode != 0
    assert "PersynScratch exists with another type" in run.stderr


def test_registration_needs_arguments(bare_server: str) -> None:
    run = register(bare_server)
    assert run.returncode == 2
    assert "usage:" in run.stderr


async def healthcheck(stack: Stack, task_queue: str) -> int:
    # Asynchronous: the worker under test polls from this same event loop.
    process = await asyncio.create_subprocess_exec(
        "sh",
        str(HEALTHCHECK),
        env=script_env(
            PERSYN_TEMPORAL_ADDRESS=stack.temporal_address, PERSYN_TASK_QUEUE=task_queue
        ),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return await asyncio.wait_for(process.wait(), timeout=DEADLINE)


async def test_worker_healthcheck_passes_while_this_host_polls(
    harness: Harness, stack: Stack
) -> None:
    # The harness worker runs in this process, so its poller identity is <pid>@<this host>,
    # exactly what a containerised worker looks like from inside its container.
    deadline = time.monotonic() + DEADLINE
    while (code := await healthcheck(stack, harness.task_queue)) != 0:
        assert time.monotonic() < deadline, f"healthcheck still failing (exit {code})"
        await asyncio.sleep(0.2)


async def test_worker_healthcheck_fails_when_nobody_polls(stack: Stack) -> None:
    assert await healthcheck(stack, "tq-nobody-polls-this") != 0
