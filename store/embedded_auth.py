"""The embedded PostgreSQL's password: generated once, kept ``0600``, required of every client.

The secret lives in a libpq password file (``*:*:*:postgres:<secret>``) in the Persyn home,
so a connection string names the file (``passfile=``) and never holds the secret: it stays
out of URLs, environments and process lists, and libpq refuses the file if group or others
can read it. The server keeps only a SCRAM-SHA-256 verifier.

A data directory from an older Persyn trusted every local connection; :func:`require_password`
moves such a running server to SCRAM: the verifier is set while trust still lets us in, then
``pg_hba.conf`` is rewritten and reloaded.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from pathlib import Path

import psycopg
from psycopg import sql

from store.private_files import create_private, overwrite_existing

SUPERUSER = "postgres"
SCRAM = "scram-sha-256"
_ITERATIONS = 4096
"""PostgreSQL's own default for SCRAM-SHA-256 verifiers."""

_TRUST = re.compile(r"(?<=\s)trust(?=\s|$)")


def read_password(path: Path) -> str | None:
    """The secret in password file ``path``, or ``None`` if there is no such file."""
    try:
        line = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    return line.split(":", 4)[4]


def ensure_password(path: Path) -> str:
    """The secret in ``path``, generated and written (``0600``) if the file does not exist."""
    existing = read_password(path)
    if existing is not None:
        return existing
    # URL-safe characters only: nothing the password file format would need escaped.
    create_private(path, f"*:*:*:{SUPERUSER}:{secrets.token_urlsafe(32)}\n")
    password = read_password(path)  # a process starting beside this one may have won
    assert password is not None
    return password


def scram_verifier(password: str, *, salt: bytes | None = None) -> str:
    """The SCRAM-SHA-256 verifier PostgreSQL stores for ``password`` (RFC 5802, 7677).

    Setting the verifier rather than the password keeps the secret out of the statement.
    """
    salt = salt if salt is not None else secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, _ITERATIONS)
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.digest(salted, b"Server Key", "sha256")

    def b64(raw: bytes) -> str:
        return base64.b64encode(raw).decode("ascii")

    return f"SCRAM-SHA-256${_ITERATIONS}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def _rules(hba: str) -> list[str]:
    return [line.split("#", 1)[0] for line in hba.splitlines()]


def trusts(hba: str) -> bool:
    """Whether some rule of ``pg_hba.conf`` text lets a client in without a password."""
    return any(_TRUST.search(rule) for rule in _rules(hba))


def without_trust(hba: str) -> str:
    """``pg_hba.conf`` text with every ``trust`` rule asking for SCRAM instead."""
    lines = []
    for line in hba.splitlines(keepends=True):
        rule, hash_, comment = line.partition("#")
        lines.append(_TRUST.sub(SCRAM, rule) + hash_ + comment)
    return "".join(lines)


NO_PASSWORD_FILE = "/nonexistent/.pgpass"
"""A password file that is not there (``/nonexistent`` is the home of accounts without
one): ~/.pgpass, if any, must not lend a passwordless connection a password, and libpq
skips a missing file without a word (``/dev/null`` earns a warning)."""


def _connect_without_password(port: int) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(
        host="127.0.0.1",
        port=port,
        user=SUPERUSER,
        dbname="postgres",
        passfile=NO_PASSWORD_FILE,
        autocommit=True,
        connect_timeout=5,
    )


def refuses_without_password(port: int) -> bool:
    """Whether the server on ``port`` turns away a client that has no password."""
    try:
        _connect_without_password(port).close()
    except psycopg.OperationalError:
        return True
    return False


def require_password(*, port: int, password: str, hba: Path, timeout: float) -> bool:
    """Move a running server that trusts local clients to SCRAM with ``password``.

    The order survives a crash at any step: the password is set first (while trust still
    lets us in), then the rules are rewritten and reloaded; a start after a crash finds trust
    still in the file and does it again with the same secret.

    Returns:
        Whether the server refuses a client without the password within ``timeout`` seconds.
    """
    with _connect_without_password(port) as conn:
        conn.execute(
            sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                sql.Identifier(SUPERUSER), sql.Literal(scram_verifier(password))
            )
        )
        overwrite_existing(hba, without_trust(hba.read_text()))
        conn.execute("SELECT pg_reload_conf()")
    # The postmaster rereads the rules on its next loop: new connections follow shortly.
    deadline = time.monotonic() + timeout
    while not refuses_without_password(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
