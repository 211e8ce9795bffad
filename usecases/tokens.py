"""Bearer tokens for the web channel: one per integrator, stored as a SHA-256 hash only.

A token is 32 random bytes, so a fast hash is enough: nobody can guess a preimage, and the
lookup by hash is one indexed read per request. The plain token exists only in what
:func:`create_token` returns.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from schemas.ids import check_handle, check_ulid, new_ulid
from schemas.settings import Settings
from store.db import Database
from store.queries import web_tokens as records
from store.tables.columns import utcnow
from store.tables.web_tokens import WebTokenRow
from usecases.errors import UseCaseError
from usecases.store import open_store

PREFIX = "persyn_"
"""Every token starts so, which makes one easy to spot in a leaked file."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$")

EVENT_OWNERS_KEPT = timedelta(days=1)
"""How long the tenant that posted an event is remembered (markers live an hour)."""


@dataclass(frozen=True)
class TokenPublic:
    """What may be shown about a token: never the token itself or its hash."""

    token_id: str
    name: str
    agents: list[str]
    """The handles it may use; empty means every agent."""
    tenant: str
    """The namespace of its channels, speakers, streams and markers: its own ID, or that of
    the token it replaced."""
    created_at: datetime
    revoked_at: datetime | None

    def allows(self, handle: str) -> bool:
        """Whether the token may talk to agent ``handle``."""
        return not self.agents or handle in self.agents


class UnknownTokenError(UseCaseError):
    """No token has this ID."""

    def __init__(self, token_id: str) -> None:
        super().__init__(f"there is no token {token_id}")


def digest(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _public(row: WebTokenRow) -> TokenPublic:
    return TokenPublic(
        token_id=row.id,
        name=row.name,
        agents=list(row.agents),
        tenant=row.tenant,
        created_at=row.created_at,
        revoked_at=row.revoked_at,
    )


async def create_token(
    *, settings: Settings, name: str, agents: list[str] | None = None
) -> tuple[TokenPublic, str]:
    """Make a token for integrator ``name``, limited to ``agents`` if given.

    Returns:
        The token's record and the plain token, which is never stored or shown again.

    Raises:
        UseCaseError: ``name`` is empty or too long.
        InvalidIdError: A handle in ``agents`` is malformed.
    """
    if not _NAME.match(name):
        raise UseCaseError(
            f"token name {name!r} must be 1-64 letters, digits, spaces, '.', '_' or '-'"
        )
    handles = sorted({check_handle(handle) for handle in agents or []})
    plain = PREFIX + secrets.token_urlsafe(32)
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        row = await records.add_token(
            session, token_id=new_ulid(), name=name, token_hash=digest(plain), agents=handles
        )
    return _public(row), plain


async def rotate_token(*, settings: Settings, token_id: str) -> tuple[TokenPublic, str]:
    """Make a replacement for token ``token_id``: same name, agents and tenant.

    The replacement sees the same conversations, streams and markers. The old token stays
    valid until it is revoked, so an integrator can switch without a gap.

    Returns:
        The new token's record and the plain token, which is never stored or shown again.

    Raises:
        UnknownTokenError: No token has this ID.
    """
    check_ulid(token_id, what="token id")
    plain = PREFIX + secrets.token_urlsafe(32)
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        old = await records.get_token(session, token_id=token_id)
        if old is None:
            raise UnknownTokenError(token_id)
        row = await records.add_token(
            session,
            token_id=new_ulid(),
            name=old.name,
            token_hash=digest(plain),
            agents=list(old.agents),
            tenant=old.tenant,
        )
    return _public(row), plain


async def list_tokens(*, settings: Settings) -> list[TokenPublic]:
    """Every token, revoked ones included."""
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        return [_public(row) for row in await records.list_tokens(session)]


async def revoke_token(*, settings: Settings, token_id: str) -> TokenPublic:
    """Revoke a token at once; revoking it again changes nothing.

    Raises:
        UnknownTokenError: No token has this ID.
    """
    check_ulid(token_id, what="token id")
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        row = await records.revoke_token(session, token_id=token_id)
    if row is None:
        raise UnknownTokenError(token_id)
    return _public(row)


async def authenticate(*, db: Database, token: str) -> TokenPublic | None:
    """The live token ``token`` is, or ``None`` (unknown or revoked)."""
    if not token.startswith(PREFIX) or len(token) > 200:
        return None
    async with db.session() as session:
        row = await records.live_token(session, token_hash=digest(token))
    return None if row is None else _public(row)


async def claim_event(*, db: Database, token: TokenPublic, handle: str, event_id: str) -> bool:
    """Record that ``token``'s tenant posts ``event_id`` to agent ``handle``.

    Returns:
        Whether the event is the tenant's: ``False`` when another tenant posted it first.
    """
    now = utcnow()
    async with db.session() as session:
        owner = await records.claim_event(
            session,
            event_id=event_id,
            agent=handle,
            tenant=token.tenant,
            at=now,
            prune=now - EVENT_OWNERS_KEPT,
        )
    return owner == token.tenant


async def owns_event(*, db: Database, token: TokenPublic, handle: str, event_id: str) -> bool:
    """Whether ``token``'s tenant posted ``event_id`` to agent ``handle``."""
    async with db.session() as session:
        owner = await records.event_owner(session, event_id=event_id, agent=handle)
    return owner == token.tenant
