"""The payload codec's keys: the master key, and each agent's data key, checked as it is used.

Every agent has one active AES-256 data key in PostgreSQL (``codec_keys``), stored wrapped
(AES-GCM) by the deployment's master key, which never enters the database. Payloads that
belong to no known agent use the deployment's shared key (scope ``*``). Shredding destroys an
agent's keys: whatever Temporal still holds under them can no longer be read by anyone.

A process keeps the keys it unwrapped, and trusts one for ``key_cache_seconds`` (1) after
PostgreSQL last said it was live; then it asks again before it seals or opens with it. A shred
commits, then waits out that trust period before it returns: once ``persyn agent shred``
(or ``delete``) has returned, no process opens a payload of that agent any more. Asking on
every use instead would cost a query per payload batch, about 80 per message.

While PostgreSQL cannot be reached, a key it confirmed within the last
:data:`UNREACHABLE_GRACE_SECONDS` is used as it was: a shred needs PostgreSQL to commit, so no
shred can happen that this process would miss, short of a network partition between it and a
database another process still reaches (the grace bounds that case). Without it every
workflow task failed to encode its completion while the database restarted, so an agent could
not even say which step was retrying.
"""

from __future__ import annotations

import asyncio
import secrets
import time
import weakref
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.ids import new_ulid
from store.queries.codec_keys import active_key, add_key, get_keys, shred_keys
from store.tables.codec_keys import STACK_SCOPE, CodecKeyRow
from temporal.key_files import decode_key, read_or_create_key

MASTER_KEY_FILE = "codec-master.key"
"""The master key's file under the Persyn home, unless configured otherwise."""

_NONCE = 12


class KeyringError(RuntimeError):
    """The master key is missing, malformed or not the one the data keys were wrapped with."""


class ShreddedKeyError(LookupError):
    """A payload's data key was shredded (or its agent deleted): its content is gone."""

    def __init__(self, key_id: str, agent: str | None) -> None:
        whose = f"agent {agent!r}" if agent else "its agent"
        super().__init__(f"payload shredded: the key of {whose} was deleted (key {key_id})")
        self.key_id = key_id
        self.agent = agent


class NoSuchAgentError(LookupError):
    """A key was asked for an agent that does not exist (or was deleted)."""


@dataclass(frozen=True)
class DataKey:
    """An unwrapped data key, ready to seal and open payloads."""

    id: str
    agent: str | None
    aead: AESGCM


def master_key(path: Path, configured: str | None) -> bytes:
    """The deployment's master key: ``configured`` (base64), or the key file at ``path``.

    The file is created on first use with mode 0600. Every process of one deployment must see
    the same key: several hosts share it through ``PERSYN_CODEC_MASTER_KEY`` or a shared file.

    Raises:
        KeyringError: The configured value or the file is not the base64 of 32 bytes, or the
            file can be neither read nor created.
    """
    if configured is not None:
        return decode_key(configured, "PERSYN_CODEC_MASTER_KEY", KeyringError)
    try:
        return read_or_create_key(path, KeyringError)
    except OSError as err:
        raise KeyringError(
            f"cannot read or create the codec master key {path} ({err.strerror or err}): fix its "
            "permissions, or set PERSYN_CODEC_MASTER_KEY or PERSYN_CODEC_MASTER_KEY_FILE"
        ) from None


UNREACHABLE_GRACE_SECONDS = 300.0
"""How long after its last confirmation a key stays usable while PostgreSQL is unreachable."""

UNREACHABLE = (OperationalError, InterfaceError, OSError, TimeoutError)
"""What a key check raises when PostgreSQL cannot be reached (down, restarting, refused)."""


class Keyring:
    """Data keys of one database: unwrapped once, and checked against PostgreSQL on each use.

    A key a process holds is trusted for ``cache_seconds`` after PostgreSQL last said it was
    live (at 0, every seal and every open asks). A shred waits that long before it returns,
    so the deployment's processes must share the setting (the codec endpoint trusts for 0).
    A shredded key is remembered as such for good: keys never come back.
    """

    def __init__(
        self,
        dsn: str,
        master: bytes,
        *,
        cache_seconds: float,
        unreachable_grace_seconds: float = UNREACHABLE_GRACE_SECONDS,
    ) -> None:
        self._dsn = dsn
        self._master = AESGCM(master)
        self._ttl = cache_seconds
        self._grace = unreachable_grace_seconds
        self._confirmed: dict[str, float] = {}
        self._engines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncEngine] = (
            weakref.WeakKeyDictionary()
        )
        self._keys: dict[str, DataKey] = {}
        self._live_until: dict[str, float] = {}
        self._shredded: dict[str, ShreddedKeyError] = {}
        self._active: dict[str, str] = {}

    def _session(self) -> AsyncSession:
        # One small pool per event loop: a pooled connection belongs to the loop that opened
        # it, and a process may run several loops in turn (the CLI). A loop's pool goes
        # with the loop.
        # Autocommit: every statement here is one read or one write, atomic on its own, and
        # a check saves the BEGIN and ROLLBACK round trips around it.
        loop = asyncio.get_running_loop()
        engine = self._engines.get(loop)
        if engine is None:
            # Pre-ping: after a database restart every pooled connection is dead, and a check
            # on one would fail although the database answers again.
            engine = create_async_engine(
                self._dsn,
                pool_size=2,
                max_overflow=8,
                isolation_level="AUTOCOMMIT",
                pool_pre_ping=True,
            )
            self._engines[loop] = engine
        return AsyncSession(engine, expire_on_commit=False)

    def _trusted(self, key_id: str) -> DataKey | None:
        key = self._keys.get(key_id)
        if key is not None and time.monotonic() < self._live_until.get(key_id, 0.0):
            return key
        return None

    def _stale(self, key_id: str | None) -> DataKey | None:
        """A key confirmed within the grace, for when PostgreSQL cannot be reached."""
        if key_id is None:
            return None
        key = self._keys.get(key_id)
        confirmed = self._confirmed.get(key_id)
        if key is None or confirmed is None or time.monotonic() - confirmed > self._grace:
            return None
        return key

    async def for_agent(self, agent: str | None) -> DataKey:
        """The active key of ``agent`` (created on first use), or the shared key for ``None``.

        An agent that does not exist in the database gets the shared key: keys belong to
        agents and go when they go.
        """
        try:
            return await self.own_key(agent)
        except NoSuchAgentError:
            return await self.own_key(None)

    async def own_key(self, agent: str | None) -> DataKey:
        """The active key of ``agent`` (created on first use), or the shared key for ``None``.

        Raises:
            NoSuchAgentError: No agent has that handle (or it was deleted).
        """
        scope = agent or STACK_SCOPE
        cached = self._active.get(scope)
        if cached is not None and (key := self._trusted(cached)) is not None:
            return key
        try:
            async with self._session() as session:
                row = await active_key(session, scope=scope)
                if row is None:
                    row = await self._create(session, scope=scope, agent=agent)
                    if row is None:
                        raise NoSuchAgentError(f"there is no agent {agent!r}")
        except UNREACHABLE:
            if (stale := self._stale(cached)) is not None:
                return stale
            raise
        found = self._remember(row)
        if isinstance(found, ShreddedKeyError):  # shredded between the two reads: try again
            return await self.own_key(agent)
        self._active[scope] = found.id
        return found

    async def _create(
        self, session: AsyncSession, *, scope: str, agent: str | None
    ) -> CodecKeyRow | None:
        key_id = new_ulid()
        material = AESGCM.generate_key(bit_length=256)
        nonce = secrets.token_bytes(_NONCE)
        wrapped = nonce + self._master.encrypt(nonce, material, key_id.encode())
        try:
            return await add_key(
                session, key_id=key_id, scope=scope, agent=agent, wrapped_key=wrapped
            )
        except IntegrityError:  # no such agent
            await session.rollback()
            return None

    async def by_id(self, key_id: str) -> DataKey:
        """The key a payload names.

        Raises:
            ShreddedKeyError: The key was shredded, or its agent deleted.
            KeyringError: The key was wrapped with another master key.
        """
        return (await self.open_keys([key_id]))[key_id]

    async def open_keys(self, key_ids: Collection[str]) -> dict[str, DataKey]:
        """The keys payloads name, each checked live (one query for those not trusted now).

        Raises:
            ShreddedKeyError: One of them was shredded, or its agent deleted.
            KeyringError: One was wrapped with another master key.
        """
        found: dict[str, DataKey] = {}
        ask: list[str] = []
        for key_id in dict.fromkeys(key_ids):
            if (gone := self._shredded.get(key_id)) is not None:
                raise ShreddedKeyError(gone.key_id, gone.agent)
            if (key := self._trusted(key_id)) is not None:
                found[key_id] = key
            else:
                ask.append(key_id)
        if ask:
            try:
                async with self._session() as session:
                    rows = {row.id: row for row in await get_keys(session, key_ids=ask)}
            except UNREACHABLE:
                stale = {key_id: self._stale(key_id) for key_id in ask}
                if any(key is None for key in stale.values()):
                    raise
                return found | {k: v for k, v in stale.items() if v is not None}
            for key_id in ask:
                row = rows.get(key_id)
                remembered = self._remember(row) if row is not None else self._gone(key_id, None)
                if isinstance(remembered, ShreddedKeyError):
                    raise ShreddedKeyError(remembered.key_id, remembered.agent)
                found[key_id] = remembered
        return found

    def _gone(self, key_id: str, agent: str | None) -> ShreddedKeyError:
        gone = self._shredded[key_id] = ShreddedKeyError(key_id, agent)
        self._keys.pop(key_id, None)
        self._live_until.pop(key_id, None)
        self._confirmed.pop(key_id, None)
        return gone

    def _remember(self, row: CodecKeyRow) -> DataKey | ShreddedKeyError:
        if row.wrapped_key is None:
            return self._gone(row.id, row.agent)
        key = self._keys.get(row.id)
        if key is None:
            key = self._keys[row.id] = DataKey(
                id=row.id, agent=row.agent, aead=AESGCM(self._unwrap(row))
            )
        now = time.monotonic()
        self._live_until[row.id] = now + self._ttl
        self._confirmed[row.id] = now
        return key

    def _unwrap(self, row: CodecKeyRow) -> bytes:
        assert row.wrapped_key is not None
        nonce, sealed = row.wrapped_key[:_NONCE], row.wrapped_key[_NONCE:]
        try:
            return self._master.decrypt(nonce, sealed, row.id.encode())
        except InvalidTag:
            raise KeyringError(
                f"data key {row.id} was wrapped with another master key: give every process "
                "the same PERSYN_CODEC_MASTER_KEY (or the same Persyn home)"
            ) from None

    async def shred(self, agent: str) -> int:
        """Destroy every key of ``agent``; returns how many were destroyed now.

        When it returns, payloads sealed with them are unreadable in this process and in
        every other of the deployment: each trusts a key for at most ``cache_seconds`` after
        it last saw it live, and this waits that long after the commit. The agent's next
        payload gets a fresh key.
        """
        async with self._session() as session:
            count = await shred_keys(session, agent=agent)
        self._active.pop(agent, None)
        for key_id, key in list(self._keys.items()):
            if key.agent == agent:
                self._gone(key_id, agent)
        # Not a guess at how long others take: the bound on how long any process may still
        # trust a key it checked just before the commit.
        await asyncio.sleep(self._ttl)
        return count


_KEYRINGS: dict[tuple[str, bytes, float], Keyring] = {}


def keyring_for(dsn: str, master: bytes, *, cache_seconds: float) -> Keyring:
    """The process's keyring for one database, master key and trust period.

    Every client a process connects shares it, so keys are unwrapped once per process (and a
    shred through it is seen by all of them).
    """
    found = _KEYRINGS.get((dsn, master, cache_seconds))
    if found is None:
        found = _KEYRINGS[(dsn, master, cache_seconds)] = Keyring(
            dsn, master, cache_seconds=cache_seconds
        )
    return found


def opened_keyrings() -> list[Keyring]:
    """Every keyring this process has opened (a replayer decodes with them)."""
    return list(_KEYRINGS.values())
