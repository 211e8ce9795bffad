"""A command can use ``/tmp``: the image packs it sticky and writable by everyone.

Docker gives the tmpfs on ``/tmp`` the mode of the image's directory, so a ``0755`` root-owned
``tmp`` in the image left the sandbox user unable to write there (``TMPDIR=/tmp`` failed).
"""

from __future__ import annotations

from tests.sandbox.conftest import MakeProvider


async def test_the_sandbox_user_can_write_to_tmp(make_provider: MakeProvider, agent: str) -> None:
    provider = make_provider()
    result = await provider.run(
        agent, "echo scratch > /tmp/probe && cat /tmp/probe && stat -c %a /tmp"
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == ["scratch", "1777"]
