"""The payload codec's keys: the master key, and each agent's data key, cached in memory.

Every agent has one active AES-256 data key in PostgreSQL (``codec_keys``), stored wrapped
(AES-GCM) by the deployment's master key, which never enters the database. Payloads that
belong to no known agent use the deployment's shared key (scope ``*``). Shredding destroys an
agent's keys: whatever Temporal still holds under them can no longer be read by anyone.

A process keeps keys in memory for ``key_cache_seconds``, so a shred made elsewhere reaches a
running worker within that time; a shred made through :meth:`Keyring.shred` is immediate in
this process.
"""

from __future__ import annotations

import base64
import binascii
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.ids import new_ulid
from store.private_files import create_private
from store.queries.codec_keys import active_key, add_key, get_key, shred_keys
from store.tables.codec_keys import STACK_SCOPE, CodecKeyRow

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
        return _decode_master(configured, "PERSYN_CODEC_MASTER_KEY")
    try:
        return _read_or_create(path)
    except OSError as err:
        raise KeyringError(
            f"cannot read or create the codec master key {path} ({err.strerror or err}): fix its "
            "permissions, or set PERSYN_CODEC_MASTER_KEY or PERSYN_CODEC_MASTER_KEY_FILE"
        ) from None


def _read_or_create(path: Path) -> bytes:
    try:
        return _decode_master(path.read_text(encoding="ascii").strip(), str(path))
    except FileNotFoundError:
        pass
    fresh = base64.b64encode(secrets.token_bytes(32)).decode("ascii")
    # In a private directory, never through a link; the first of two processes starting
    # together wins, and the other reads its key.
    if not create_private(path, fresh + "\n"):
        return _decode_master(path.read_text(encoding="ascii").strip(), str(path))
    return base64.b64decode(fresh)


def _decode_master(value: str, source: str) -> bytes:
    try:
        key = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != 32:
        raise KeyringError(
            f"{source} must be the base64 of 32 random bytes: "
            "generate one with `openssl rand -base64 32`"
        )
    return key


class Keyring:
    """Data keys of one database, fetched on demand and cached for ``cache_seconds``."""

    def __init__(self, dsn: str, master: bytes, *, cache_seconds: float) -> None:
        self._dsn = dsn
        self._master = AESGCM(master)
        self._ttl = cache_seconds
        self._engine: AsyncEngine | None = None
        self._by_id: dict[str, tuple[DataKey | ShreddedKeyError, float]] = {}
        self._by_scope: dict[str, tuple[str, float]] = {}

    def _session(self) -> AsyncSession:
        if self._engine is None:
            # No pool: a process may run several event loops in turn (the CLI), and a pooled
            # connection belongs to the loop that opened it. Cache misses are rare.
            self._engine = create_async_engine(self._dsn, poolclass=NullPool)
        return AsyncSession(self._engine, expire_on_commit=False)

    def _fresh(self, expires: float) -> bool:
        return time.monotonic() < expires

    async def for_agent(self, agent: str | None) -> DataKey:
        """The active key of ``agent`` (created on first use), or the shared key for ``None``.

        An agent that does not exist in the database gets the shared key: keys belong to
        agents and go when they go.
        """
        scope = agent or STACK_SCOPE
        cached = self._by_scope.get(scope)
        if cached is not None and self._fresh(cached[1]):
            found = self._by_id.get(cached[0])
            if found is not None and isinstance(found[0], DataKey) and self._fresh(found[1]):
                return found[0]
        async with self._session() as session:
            row = await active_key(session, scope=scope)
            if row is None:
                row = await self._create(session, scope=scope, agent=agent)
                if row is None:
                    return await self.for_agent(None)
        key = self._remember(row)
        if isinstance(key, ShreddedKeyError):  # shredded between the two reads: try again
            return await self.for_agent(agent)
        self._by_scope[scope] = (key.id, time.monotonic() + self._ttl)
        return key

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
        cached = self._by_id.get(key_id)
        if cached is None or not self._fresh(cached[1]):
            async with self._session() as session:
                row = await get_key(session, key_id=key_id)
            if row is None:
                self._by_id[key_id] = (ShreddedKeyError(key_id, None), self._expiry())
            else:
                self._remember(row)
            cached = self._by_id[key_id]
        found = cached[0]
        if isinstance(found, ShreddedKeyError):
            raise ShreddedKeyError(found.key_id, found.agent)
        return found

    def _expiry(self) -> float:
        return time.monotonic() + self._ttl

    def _remember(self, row: CodecKeyRow) -> DataKey | ShreddedKeyError:
        found: DataKey | ShreddedKeyError
        if row.wrapped_key is None:
            found = ShreddedKeyError(row.id, row.agent)
        else:
            found = DataKey(id=row.id, agent=row.agent, aead=AESGCM(self._unwrap(row)))
        self._by_id[row.id] = (found, self._expiry())
        return found

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

        Payloads sealed with them become unreadable at once in this process, and in others
        once their cache expires. The agent's next payload gets a fresh key.
        """
        async with self._session() as session:
            count = await shred_keys(session, agent=agent)
        self._by_scope.pop(agent, None)
        for key_id, (found, _) in list(self._by_id.items()):
            if found.agent == agent:
                self._by_id[key_id] = (ShreddedKeyError(key_id, agent), self._expiry())
        return count


_KEYRINGS: dict[tuple[str, bytes], Keyring] = {}


def keyring_for(dsn: str, master: bytes, *, cache_seconds: float) -> Keyring:
    """The process's keyring for one database and master key.

    Every client a process connects shares it, so keys are fetched once per process (and a
    shred through it is seen by all of them).
    """
    keyring = _KEYRINGS.get((dsn, master))
    if keyring is None:
        keyring = _KEYRINGS[(dsn, master)] = Keyring(dsn, master, cache_seconds=cache_seconds)
    return keyring


def opened_keyrings() -> list[Keyring]:
    """Every keyring this process has opened (a replayer decodes with them)."""
    return list(_KEYRINGS.values())
