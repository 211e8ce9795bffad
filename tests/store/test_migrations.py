"""The migrations form one chain, and every database reaches its one head.

The areas that once branched from a common parent are joined by the merge revision
``0012_web_tenants``. After it the rule holds (docs/operations.md, "Schema migrations"): each
file is ``NNNN_snake_case.py`` with a number of its own, greater than every earlier one; its
revision ID is its file name without ``.py``; it revises the revision numbered just before it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from alembic import command
from alembic.script import Script, ScriptDirectory

from store.embedded import EmbeddedPostgres
from store.migrate import _config, current_revisions, head_revision, upgrade

MERGE = "0012_web_tenants"
"""The revision that joined every branch; the naming rule holds for revisions after it."""

FILE_NAME = re.compile(r"^(\d{4})_[a-z0-9]+(?:_[a-z0-9]+)*\.py$")


def _scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(_config("postgresql://", 384))


def _revisions() -> list[Script]:
    return list(_scripts().walk_revisions())


def _number(script: Script) -> int:
    assert script.path is not None
    name = Path(script.path).name
    assert re.match(r"^\d{4}_", name), f"{name}: does not start with a four-digit number"
    return int(name[:4])


def test_the_migrations_have_exactly_one_head() -> None:
    assert len(_scripts().get_heads()) == 1
    assert _scripts().get_heads() == [head_revision()]


def test_the_merge_joins_every_branch_that_was_open() -> None:
    merge = _scripts().get_revision(MERGE)

    assert merge is not None and merge.is_merge_point
    before = {s.revision for s in _revisions() if _number(s) <= _number(merge)}
    ancestors = {s.revision for s in _scripts().iterate_revisions(MERGE, "base")}
    assert before <= ancestors, "a revision numbered up to the merge is not behind it"


def test_revisions_after_the_merge_are_named_numbered_and_chained() -> None:
    merge = _scripts().get_revision(MERGE)
    assert merge is not None
    after = sorted(
        (s for s in _revisions() if _number(s) > _number(merge)),
        key=_number,
    )

    previous = merge.revision
    for script in after:
        assert script.path is not None
        name = Path(script.path).name
        assert FILE_NAME.match(name), f"{name}: not NNNN_snake_case.py"
        assert script.revision == Path(name).stem, f"{name}: revision ID is not the file stem"
        assert script.down_revision == previous, (
            f"{name}: revises {script.down_revision!r}, not the revision before it ({previous!r})"
        )
        assert not script.branch_labels and not script.dependencies, f"{name}: branches"
        previous = script.revision
    assert previous == head_revision()


def test_no_two_files_after_the_merge_share_a_number() -> None:
    versions = Path(_scripts().versions)
    merge_number = int(MERGE[:4])
    numbers = [
        int(f.name[:4])
        for f in versions.glob("*.py")
        if f.name[:4].isdigit() and int(f.name[:4]) >= merge_number
    ]

    assert len(numbers) == len(set(numbers)), sorted(numbers)


@pytest.fixture
def empty_database(postgres: EmbeddedPostgres) -> Iterator[str]:
    name = f"migrations_{uuid.uuid4().hex[:8]}"
    # The session's server asks for its password: the URLs name its password file.
    passfile = quote(str(postgres.password_file), safe="/")
    admin = f"postgresql://postgres@127.0.0.1:{postgres.port}/postgres?passfile={passfile}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{postgres.port}/{name}?passfile={passfile}"
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_an_empty_database_upgrades_to_the_head(empty_database: str) -> None:
    assert current_revisions(empty_database) == ()

    assert upgrade(empty_database) == (head_revision(),)

    assert current_revisions(empty_database) == (head_revision(),)
    assert upgrade(empty_database) == (head_revision(),), "a second upgrade is a no-op"


@pytest.fixture
def database_at_the_old_heads(empty_database: str) -> str:
    """A database migrated by a release from before the merge: at every branch's head."""
    merge = _scripts().get_revision(MERGE)
    assert merge is not None and isinstance(merge.down_revision, tuple)
    config = _config(empty_database, 384)
    for parent in merge.down_revision:
        command.upgrade(config, parent)
    return empty_database


def test_a_database_at_the_old_heads_upgrades_through_the_merge(
    database_at_the_old_heads: str,
) -> None:
    merge = _scripts().get_revision(MERGE)
    assert merge is not None and isinstance(merge.down_revision, tuple)
    assert current_revisions(database_at_the_old_heads) == tuple(sorted(merge.down_revision))

    assert upgrade(database_at_the_old_heads) == (head_revision(),)

    assert current_revisions(database_at_the_old_heads) == (head_revision(),)
    dsn = database_at_the_old_heads.replace("+psycopg", "")
    with psycopg.connect(dsn) as connection:
        # The merge's own change ran: the web channel's events table exists.
        found = connection.execute("SELECT to_regclass('web_events') IS NOT NULL").fetchone()
    assert found == (True,)
