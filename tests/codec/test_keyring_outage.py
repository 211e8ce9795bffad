"""While PostgreSQL is down or restarting, the payload codec goes on with the keys it confirmed.

With keys trusted for one second, every workflow task failed to encode its completion for as
long as the database restarted, so an agent could not even report which step was retrying; and
after the restart the keyring's pooled connections were dead. A shred needs PostgreSQL, so a
key confirmed shortly before the outage is used through it (for a bounded grace), and checks
resume as soon as the database answers again.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from sqlalchemy.exc import OperationalError

from store.embedded import EmbeddedPostgres
from temporal.keyring import Keyring
from tests.own_postgres import own_postgres


@pytest.fixture
def server() -> Iterator[EmbeddedPostgres]:
    with own_postgres("persyn-outage-", migrated=True) as server:
        yield server


async def test_confirmed_keys_serve_through_an_outage_and_checks_resume_after(
    server: EmbeddedPostgres,
) -> None:
    master = secrets.token_bytes(32)
    keyring = Keyring(server.dsn, master, cache_seconds=0)  # every use asks PostgreSQL
    brief = Keyring(server.dsn, master, cache_seconds=0, unreachable_grace_seconds=0)
    shared = await keyring.own_key(None)
    assert (await brief.own_key(None)).id == shared.id

    server.stop()
    # Down: the key confirmed a moment ago still seals and opens...
    assert (await keyring.own_key(None)).id == shared.id
    assert (await keyring.by_id(shared.id)).id == shared.id
    # ...but only within the grace: past it, the outage is an error, as before.
    with pytest.raises(OperationalError):
        await brief.by_id(shared.id)

    server.start()
    # Back: the dead pooled connections are replaced and the check is live again.
    assert (await keyring.own_key(None)).id == shared.id
    assert (await brief.by_id(shared.id)).id == shared.id
