"""What a search may look at: the agent's channels, and filters checked before they run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.exc import DBAPIError
from sqlmodel.ext.asyncio.session import AsyncSession

from store.sql import execute


class SearchInputError(ValueError):
    """A search the user got wrong (bad pattern, unknown agent or channel); one line."""


@dataclass(frozen=True)
class Filters:
    """Restrictions every ranked or listed turn must meet."""

    since: datetime | None = None
    until: datetime | None = None
    tags: Sequence[str] = ()
    keyword: str | None = None
    regex: str | None = None

    def sql(self, alias: str = "d") -> tuple[str, dict[str, Any]]:
        """A SQL condition on table alias ``alias`` (``TRUE`` if none) and its parameters."""
        parts: list[str] = []
        params: dict[str, Any] = {}
        if self.since is not None:
            parts.append(f"{alias}.at >= :f_since")
            params["f_since"] = self.since
        if self.until is not None:
            parts.append(f"{alias}.at <= :f_until")
            params["f_until"] = self.until
        if self.tags:
            parts.append(f"{alias}.tags @> CAST(:f_tags AS varchar[])")
            params["f_tags"] = list(self.tags)
        if self.keyword:
            parts.append(f"{alias}.search_tsv @@ websearch_to_tsquery('english', :f_keyword)")
            params["f_keyword"] = self.keyword
        if self.regex:
            # Case-insensitive by default; a pattern starting with (?c) turns that off.
            parts.append(f"{alias}.text ~* :f_regex")
            params["f_regex"] = self.regex
        return (" AND ".join(parts) or "TRUE"), params


async def set_timeout(session: AsyncSession, seconds: float) -> None:
    """Bound every statement of the current transaction, so no pattern can hang the server."""
    await execute(session, f"SET LOCAL statement_timeout = {max(1, int(seconds * 1000))}")


async def scope(
    session: AsyncSession, *, agent: str, channel_ids: Sequence[str] | None
) -> dict[str, str]:
    """The channels searched, as ID to key; every channel of the agent when none are named.

    Raises:
        SearchInputError: The agent does not exist, or a channel is not one of its own.
    """
    found = await execute(session, "SELECT 1 FROM agents WHERE handle = :a", {"a": agent})
    if found.first() is None:
        raise SearchInputError(
            f"unknown agent {agent!r}: check the handle with `persyn agent list`"
        )
    rows = await execute(session, "SELECT id, key FROM channels WHERE agent = :a", {"a": agent})
    channels = {str(row.id): str(row.key) for row in rows}
    if channel_ids is None:
        return channels
    unknown = [c for c in channel_ids if c not in channels]
    if unknown:
        raise SearchInputError(f"channel {unknown[0]} is not one of agent {agent!r}'s channels")
    return {c: channels[c] for c in channel_ids}


async def channel_by_key(session: AsyncSession, *, agent: str, key: str) -> str:
    """The ID of the agent's channel ``service:channel``.

    Raises:
        SearchInputError: The agent has no such channel.
    """
    row = (
        await execute(
            session,
            "SELECT id FROM channels WHERE agent = :a AND key = :k",
            {"a": agent, "k": key},
        )
    ).first()
    if row is None:
        raise SearchInputError(f"agent {agent!r} has no channel {key!r}")
    return str(row.id)


def _first_line(err: DBAPIError) -> str:
    diag = getattr(err.orig, "diag", None)
    message = getattr(diag, "message_primary", None) or str(err.orig or err)
    return str(message).strip().splitlines()[0]


async def check_patterns(session: AsyncSession, filters: Filters) -> None:
    """Have PostgreSQL compile the regular expression and parse the keyword expression.

    Raises:
        SearchInputError: The pattern does not compile, or the keyword has no searchable word.
    """
    if filters.regex is not None:
        try:
            async with session.begin_nested():
                await execute(session, "SELECT '' ~* :p", {"p": filters.regex})
        except DBAPIError as err:
            if getattr(err.orig, "sqlstate", None) == "57014":  # timed out: not a syntax error
                raise
            reason = _first_line(err).removeprefix("invalid regular expression: ")
            raise SearchInputError(
                f"invalid regular expression {filters.regex!r} ({reason}): fix the pattern"
            ) from None
    if filters.keyword is not None:
        nodes = await execute(
            session,
            "SELECT numnode(websearch_to_tsquery('english', :k))",
            {"k": filters.keyword},
        )
        if not nodes.scalar_one():
            raise SearchInputError(
                f"keyword {filters.keyword!r} has no searchable word (only stop words): "
                "use a more specific word"
            )
