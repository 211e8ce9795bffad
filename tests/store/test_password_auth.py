"""The embedded PostgreSQL lets in only who holds its password.

Any local account could otherwise connect to 127.0.0.1 as the superuser, read every
conversation and run programs as the server's account (``COPY ... FROM PROGRAM``).
"""

from __future__ import annotations

import stat

import psycopg
import pytest

from activities.channels.stream import libpq_dsn
from store.embedded import EmbeddedPostgres
from store.embedded_auth import NO_PASSWORD_FILE


def _without_password(server: EmbeddedPostgres) -> str:
    return (
        f"host=127.0.0.1 port={server.port} user=postgres dbname=postgres "
        f"passfile={NO_PASSWORD_FILE}"
    )


def test_a_connection_without_the_password_is_refused(postgres: EmbeddedPostgres) -> None:
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(_without_password(postgres), connect_timeout=5).close()


def test_a_wrong_password_is_refused(postgres: EmbeddedPostgres) -> None:
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(_without_password(postgres) + " password=guess", connect_timeout=5).close()


def test_the_stores_own_connection_holds_the_password(postgres: EmbeddedPostgres) -> None:
    with psycopg.connect(libpq_dsn(postgres.dsn), connect_timeout=5) as conn:
        method = conn.execute("SELECT current_setting('password_encryption')").fetchone()
    assert method == ("scram-sha-256",)
    mode = postgres.password_file.stat().st_mode
    assert stat.S_IMODE(mode) == 0o600
    assert "trust" not in _hba_methods(postgres)


def _hba_methods(server: EmbeddedPostgres) -> set[str]:
    with psycopg.connect(libpq_dsn(server.dsn), connect_timeout=5) as conn:
        rows = conn.execute("SELECT auth_method FROM pg_hba_file_rules").fetchall()
    return {row[0] for row in rows}
