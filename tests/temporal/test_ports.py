"""Ports for private stacks come from outside the kernel's ephemeral range, each once."""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator

import pytest

from temporal import ports


def test_ports_come_from_below_the_ephemeral_range_and_never_twice() -> None:
    handed = [ports.free_port() for _ in range(300)]
    assert len(set(handed)) == len(handed)
    assert all(ports.LOWEST <= port < ports.ephemeral_start() for port in handed)


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_a_port_something_listens_on_is_passed_over(
    listening: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as quiet:
        quiet.bind(("127.0.0.1", 0))
        spare = int(quiet.getsockname()[1])
    draws = iter([listening, spare])
    monkeypatch.setattr(ports, "LOWEST", 1_024)
    monkeypatch.setattr(ports, "ephemeral_start", lambda: 65_536)
    monkeypatch.setattr(random, "randrange", lambda _low, _high: next(draws))
    assert ports.free_port() == spare


def test_with_no_quiet_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    kernels = ports.ephemeral_start()
    monkeypatch.setattr(ports, "ephemeral_start", lambda: ports.LOWEST + 10)
    port = ports.free_port()
    assert port >= kernels
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))  # free when handed out
