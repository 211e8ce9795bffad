"""Folding one person into another: every row that names the folded person moves (spec §4.5).

``PERSON_REFERENCES`` is the single list of every (table, column) holding a person's ID. A
fold walks it, so an area that stores person IDs adds its row here and folds keep working.
A fold is retroactive: identities, addresses, dialog, conversations, memories, observations
and graph nodes all move to the survivor, and an audit row records who folded what, and when.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from sqlalchemy import text
from sqlmodel.ext.asyncio.session import AsyncSession


class RefKind(StrEnum):
    """How a column holds person IDs."""

    SCALAR = "scalar"
    """One person ID (or NULL)."""
    ARRAY = "array"
    """A varchar[] of person IDs (participants); a fold leaves each ID in it once."""


@dataclass(frozen=True)
class PersonRef:
    """One column that references a person.

    Attributes:
        table: Table name; it must have an ``agent`` column.
        column: Column holding the person ID(s).
        kind: Scalar or array.
        unique_with: Other columns that, with ``column``, are unique per agent. Where the
            survivor already has a row with the same values, the folded person's row is
            dropped (the survivor's wins) instead of breaking the constraint.
    """

    table: str
    column: str
    kind: RefKind = RefKind.SCALAR
    unique_with: tuple[str, ...] = field(default=())


PERSON_REFERENCES: tuple[PersonRef, ...] = (
    PersonRef("identities", "person_id"),
    PersonRef("contact_addresses", "person_id", unique_with=("kind", "address")),
    PersonRef("channels", "last_person_id"),
    PersonRef("dialog_turns", "person_id"),
    PersonRef("conversations", "participants", RefKind.ARRAY),
    PersonRef("memory_records", "participants", RefKind.ARRAY),
    PersonRef("memory_formations", "participants", RefKind.ARRAY),
    PersonRef("quick_facts", "subject", unique_with=("key",)),
    PersonRef("graph_nodes", "person_id"),
    PersonRef("observations", "person_id"),
    PersonRef("notes", "scope_id"),
    PersonRef("dial_intents", "person_id"),
    # Observation and knowledge-graph rows are added below by their areas, one line each.
)
"""Every (table, column) that references a person; a fold moves them all."""


def _scalar_moves(ref: PersonRef) -> list[str]:
    statements = []
    if ref.unique_with:
        same = " AND ".join(f"s.{c} IS NOT DISTINCT FROM v.{c}" for c in ref.unique_with)
        statements.append(
            f"DELETE FROM {ref.table} AS v WHERE v.agent = :agent AND v.{ref.column} = :victim "
            f"AND EXISTS (SELECT 1 FROM {ref.table} AS s WHERE s.agent = v.agent "
            f"AND s.{ref.column} = :survivor AND {same})"
        )
    statements.append(
        f"UPDATE {ref.table} SET {ref.column} = :survivor "
        f"WHERE agent = :agent AND {ref.column} = :victim"
    )
    return statements


def _array_move(ref: PersonRef) -> str:
    # Replace the victim's ID and drop the duplicate if the survivor was already there,
    # keeping the order the participants joined in.
    return (
        f"UPDATE {ref.table} SET {ref.column} = ARRAY("
        f"SELECT x FROM (SELECT CASE WHEN e = :victim THEN :survivor ELSE e END AS x, "
        f"min(n) AS first FROM unnest({ref.column}) WITH ORDINALITY AS u(e, n) GROUP BY 1) AS d "
        f"ORDER BY first)::varchar[] "
        f"WHERE agent = :agent AND :victim = ANY({ref.column})"
    )


@dataclass(frozen=True)
class FoldResult:
    """What a fold moved: rows changed per ``table.column``.

    ``open_conversations`` had the folded person among their participants: their running
    workflows hold that list too, and are told of the fold (``person_folded``).
    """

    survivor: str
    folded: str
    name: str
    moved: dict[str, int]
    open_conversations: list[str] = field(default_factory=list)


async def fold_person(
    session: AsyncSession,
    *,
    agent: str,
    victim: str,
    survivor: str,
    name: str,
    by: str,
    at: datetime,
) -> FoldResult:
    """Move everything that references ``victim`` to ``survivor``; delete the victim; audit.

    The caller checks that both people exist, belong to ``agent`` and differ. Runs in the
    caller's transaction and commits it, so a failure leaves nothing half-moved.
    """
    connection = await session.connection()
    params = {"agent": agent, "victim": victim, "survivor": survivor}
    moved: dict[str, int] = {}
    open_conversations = [
        str(row[0])
        for row in await connection.execute(
            text(
                "SELECT id FROM conversations WHERE agent = :agent AND status = 'open' "
                "AND :victim = ANY(participants) ORDER BY id"
            ),
            params,
        )
    ]
    for ref in PERSON_REFERENCES:
        statements = _scalar_moves(ref) if ref.kind is RefKind.SCALAR else [_array_move(ref)]
        count = 0
        for statement in statements:
            result = await connection.execute(text(statement), params)
            count = result.rowcount
        moved[f"{ref.table}.{ref.column}"] = count
    await connection.execute(
        text(
            "UPDATE people AS s SET display_name = :name, name_curated = true, "
            "last_seen_at = GREATEST(s.last_seen_at, v.last_seen_at), "
            "preferred_channel = COALESCE(s.preferred_channel, v.preferred_channel) "
            "FROM people AS v WHERE s.id = :survivor AND v.id = :victim AND s.agent = :agent"
        ),
        {**params, "name": name},
    )
    await connection.execute(
        text("DELETE FROM people WHERE agent = :agent AND id = :victim"), params
    )
    await connection.execute(
        text(
            "INSERT INTO contact_folds (agent, folded, survivor, name, folded_by, folded_at, "
            "moved) VALUES (:agent, :victim, :survivor, :name, :by, :at, CAST(:moved AS jsonb))"
        ),
        {**params, "name": name, "by": by, "at": at, "moved": json.dumps(moved, sort_keys=True)},
    )
    await session.commit()
    return FoldResult(
        survivor=survivor,
        folded=victim,
        name=name,
        moved=moved,
        open_conversations=open_conversations,
    )
