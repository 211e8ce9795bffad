"""A data directory from an older Persyn, which trusted every local client, is moved to SCRAM.

Its server had no password and ``pg_hba.conf`` said ``trust``; the next start (of a stopped
server, or of ``persyn up`` finding it running) sets a generated password and requires it.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator

import psycopg
import pytest

from activities.channels.stream import libpq_dsn
from store.embedded import EmbeddedPostgres, PostgresStartError
from store.embedded_auth import refuses_without_password
from tests.harness import until
from tests.own_postgres import own_postgres


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedPostgres]:
    with own_postgres("persyn-trust-") as server:
        yield server


async def _make_old(server: EmbeddedPostgres) -> None:
    """Turn the running server into what an older Persyn left: trust, no password."""
    with psycopg.connect(libpq_dsn(server.dsn), autocommit=True) as conn:
        conn.execute("ALTER ROLE postgres PASSWORD NULL")
        hba = server.hba_file.read_text().replace("scram-sha-256", "trust")
        server.hba_file.write_text(hba)
        conn.execute("SELECT pg_reload_conf()")
    server.password_file.unlink()
    # The reload is asynchronous: the old server let anyone in, and so must this one now.
    await until(lambda: not refuses_without_password(server.port), timeout=10)


def _assert_secured(server: EmbeddedPostgres) -> None:
    assert refuses_without_password(server.port)
    assert stat.S_IMODE(server.password_file.stat().st_mode) == 0o600
    assert "trust" not in {
        line.split()[-1]
        for line in server.hba_file.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    with psycopg.connect(libpq_dsn(server.dsn)) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


async def test_a_stopped_trusting_server_requires_the_password_once_started(
    server: EmbeddedPostgres,
) -> None:
    await _make_old(server)
    server.stop()

    server.start()

    _assert_secured(server)


async def test_a_running_trusting_server_requires_the_password_after_start(
    server: EmbeddedPostgres,
) -> None:
    await _make_old(server)

    server.start()  # finds it running, as `persyn up` would

    _assert_secured(server)


def test_a_lost_password_file_is_reported_not_replaced(server: EmbeddedPostgres) -> None:
    kept = server.password_file.read_bytes()
    server.stop()
    server.password_file.unlink()
    try:
        with pytest.raises(PostgresStartError, match=r"password file .* is missing"):
            server.start()
    finally:
        server.password_file.write_bytes(kept)
        server.password_file.chmod(0o600)
    server.start()
    _assert_secured(server)
