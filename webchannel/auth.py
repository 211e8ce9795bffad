"""Bearer tokens: every ``/v1`` request names its integrator's token; only hashes are stored."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from usecases.tokens import TokenPublic, authenticate
from webchannel.state import WebState, web_state

bearer = HTTPBearer(
    auto_error=False,
    description="A token from `persyn tokens create NAME`, sent as `Authorization: Bearer ...`.",
)

_CHALLENGE = {"WWW-Authenticate": "Bearer"}


async def integrator(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    state: Annotated[WebState, Depends(web_state)],
) -> TokenPublic:
    """The token the request carries, or 401 (a FastAPI dependency of every ``/v1`` route)."""
    if credentials is None:
        raise HTTPException(
            401,
            "missing bearer token: send `Authorization: Bearer <token>` "
            "(create one with `persyn tokens create NAME`)",
            headers=_CHALLENGE,
        )
    token = await authenticate(db=state.db, token=credentials.credentials)
    if token is None:
        raise HTTPException(401, "the bearer token is unknown or revoked", headers=_CHALLENGE)
    return token


def allow(token: TokenPublic, handle: str) -> None:
    """Refuse (403) an agent the token is not for."""
    if not token.allows(handle):
        raise HTTPException(403, f"token {token.token_id} may not talk to agent {handle!r}")
