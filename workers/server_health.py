"""The servers' health as ``persyn status`` shows it: Temporal with the worker, UI, PostgreSQL.

Each probe answers within seconds and says in one line what to do about a server that does not
answer; the supervised processes' own health is :mod:`workers.health`.
"""

from __future__ import annotations

import urllib.request

from sqlalchemy import create_engine, pool, text

from schemas.settings import Settings
from temporal.client import connect
from workers.health import ComponentStatus, worker_status
from workers.process import TEMPORAL, live_pid


def database_status(settings: Settings, pid: int | None) -> ComponentStatus:
    """PostgreSQL's health and pgvector's version; ``pid``: the embedded server's, if any."""
    dsn = settings.database_dsn()
    address = dsn.split("@", 1)[-1].split("?", 1)[0]  # not the password file's path
    try:
        engine = create_engine(dsn, poolclass=pool.NullPool, connect_args={"connect_timeout": 2})
        with engine.connect() as conn:
            version = conn.execute(
                text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            ).scalar()
        engine.dispose()
    except Exception as err:
        return ComponentStatus(
            name="postgres",
            healthy=False,
            address=address,
            pid=pid,
            detail=_database_problem(settings, err),
        )
    return ComponentStatus(
        name="postgres",
        healthy=True,
        address=address,
        pid=pid,
        detail=f"pgvector {version}" if version else "pgvector not installed",
    )


def _database_problem(settings: Settings, err: Exception) -> str:
    """What to do about a database that did not answer, in one line."""
    reason = str(getattr(err, "orig", None) or err).splitlines()[0]
    if "refused" in reason or "timeout expired" in reason:
        if settings.embedded:
            return "not running: run `persyn up`"
        return "nothing answers at PERSYN_DATABASE_URL: start the database, or correct the URL"
    if "password authentication failed" in reason:
        return "the database refused the password: check PERSYN_DATABASE_URL"
    return reason[:120]


def ui_status(settings: Settings) -> ComponentStatus:
    """Whether the embedded Temporal's Web UI answers."""
    url = settings.ui_url
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            healthy = response.status == 200
    except OSError as err:
        reason = str(getattr(err, "reason", err))
        refused = "refused" in reason or "timed out" in reason
        detail = "not running: it comes up with Temporal (`persyn up`)" if refused else reason
        return ComponentStatus(name="web-ui", healthy=False, address=url, detail=detail[:120])
    return ComponentStatus(name="web-ui", healthy=healthy, address=url)


async def temporal_and_worker_status(settings: Settings) -> list[ComponentStatus]:
    """Temporal's health, then the worker's (judged through Temporal when it answers)."""
    address = settings.temporal_address
    pid = live_pid(settings, TEMPORAL) if settings.embedded else None
    try:
        client = await connect(settings)
    except Exception as err:
        return [
            ComponentStatus(
                name="temporal",
                healthy=False,
                address=address,
                pid=pid,
                detail=str(err).splitlines()[0][:120],
            ),
            await worker_status(settings, None),
        ]
    return [
        ComponentStatus(
            name="temporal",
            healthy=True,
            address=address,
            pid=pid,
            detail=f"namespace {settings.temporal_namespace}",
        ),
        await worker_status(settings, client),
    ]
