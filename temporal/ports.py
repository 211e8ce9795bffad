"""Free TCP ports for servers a test or a benchmark starts on a private stack.

``bind(("127.0.0.1", 0))`` draws from the kernel's ephemeral range, the same range a Temporal
dev server draws its internal service ports from and every outgoing connection its source
port. A port found free there can be taken before the server given it binds it: a dev server
or a PostgreSQL then dies, or worse, opens its first port and dies after. The ports handed out
here come from below that range, where nothing is assigned on its own, and this process never
hands out the same one twice.
"""

from __future__ import annotations

import random
import socket
import threading
from pathlib import Path

LOWEST = 20_000
"""Below the usual ephemeral ranges (Linux 32768, BSD and Windows 49152) and above the ports
well-known services register."""

DEFAULT_EPHEMERAL_START = 32_768

_handed_out: set[int] = set()
_lock = threading.Lock()


def ephemeral_start() -> int:
    """The first port of the kernel's ephemeral range."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return DEFAULT_EPHEMERAL_START


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _from_kernel() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_port() -> int:
    """A TCP port nothing listens on now, outside the ephemeral range, new to this process."""
    top = ephemeral_start()
    with _lock:
        if top - LOWEST >= 1_000:
            for _ in range(1_000):
                port = random.randrange(LOWEST, top)
                if port not in _handed_out and _bindable(port):
                    _handed_out.add(port)
                    return port
        # A machine whose ephemeral range starts low leaves no quiet range: the kernel's pick.
        port = _from_kernel()
        _handed_out.add(port)
        return port
