"""An exec whose output never ends does not hold a worker thread past its deadline.

gVisor loses an exec now and then: the command is gone, but the engine never closes its
output stream, and the thread reading it would wait for good. A few of those starve every
later engine call of the thread pool (the provider then hangs). Under gVisor the limit is kept
from outside only; here, on the real engine with runc, the provider is made to keep it the
same way, and a command that outlives its deadline stands in for the lost exec.
"""

from __future__ import annotations

import sys
from types import FrameType

import pytest

from activities.sandbox.docker import DockerProvider
from tests.harness import until
from tests.sandbox.conftest import MakeProvider


def _readers() -> int:
    """Threads now inside the provider's exec reader."""
    count = 0
    for frame in sys._current_frames().values():
        current: FrameType | None = frame
        while current is not None:
            if current.f_code is DockerProvider._exec.__code__:
                count += 1
            current = current.f_back
    return count


async def test_a_stream_left_open_is_closed_at_the_deadline(
    make_provider: MakeProvider, agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = make_provider()
    monkeypatch.setattr(type(provider), "_limit_inside", property(lambda self: False))
    await provider.run(agent, "true")
    assert _readers() == 0

    # Nothing inside ends it, and no restart follows (that comes after, in run()).
    with pytest.raises(TimeoutError):
        await provider._attempt(agent, "sleep 600", 1.0)

    await until(lambda: _readers() == 0, timeout=5)
    after = await provider.run(agent, "echo still serving")
    assert after.exit_code == 0 and after.stdout == "still serving\n"
