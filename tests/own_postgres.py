"""A PostgreSQL server of a test's own, for tests that stop, restart or rewrite it.

The session's server is shared by every test, so a test that takes its database down (an
outage) or changes how it authenticates (an older data directory) starts one of its own.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from store.embedded import EmbeddedPostgres
from store.migrate import upgrade
from temporal.devserver import free_port


@contextmanager
def own_postgres(prefix: str, *, migrated: bool = False) -> Iterator[EmbeddedPostgres]:
    """A started server in a fresh home (with Persyn's schema if ``migrated``), then stopped."""
    with tempfile.TemporaryDirectory(prefix=prefix) as path:
        Path(path).chmod(0o755)  # the embedded server may run as another account
        home = Path(path) / "home"
        server = EmbeddedPostgres(
            data_dir=home / "postgres",
            port=free_port(),
            log_file=home / "logs" / "postgres.log",
            shared_buffers="32MB",
            password_path=home / "postgres.pgpass",
        )
        server.start()
        try:
            if migrated:
                upgrade(server.dsn)
            yield server
        finally:
            server.stop()
