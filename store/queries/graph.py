"""The knowledge graph: upsert entities and relations, and read neighbourhoods and paths.

Edges are never deleted: a contradicted edge gets ``invalidated_at`` and the ID of the edge
that replaced it, so every read can be asked "as of" a time. Reads walk the graph with
recursive CTEs bounded by hop count and row count, so a hub entity cannot make a prompt slow.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.graph import MAX_HOPS, GraphEdge, GraphNode, GraphPath, Neighbourhood
from schemas.ids import new_ulid
from store.db import execute_sql

MAX_NAME_WORDS = 4
"""Longest entity name, in words, matched in input text."""

_WORD = re.compile(r"[^\W_]+(?:['\u2019.-][^\W_]+)*", re.UNICODE)


def name_key(name: str) -> str:
    """``name`` as matched: its words, case-folded, joined by single spaces."""
    return " ".join(_WORD.findall(name.casefold()))


def mention_keys(input_text: str, *, max_words: int = MAX_NAME_WORDS) -> list[str]:
    """Every run of up to ``max_words`` consecutive words in ``input_text``, as name keys."""
    words = _WORD.findall(input_text.casefold())
    keys = {
        " ".join(words[i : i + n])
        for n in range(1, max_words + 1)
        for i in range(len(words) - n + 1)
    }
    return sorted(keys)


def _valid(alias: str, as_of: datetime | None) -> str:
    """SQL for "edge ``alias`` held at ``as_of``" (now when ``None``)."""
    if as_of is None:
        return f"{alias}.invalidated_at IS NULL"
    return (
        f"{alias}.valid_from <= :as_of"
        f" AND ({alias}.invalidated_at IS NULL OR {alias}.invalidated_at > :as_of)"
    )


_NODE_COLUMNS = "id, type, name, attributes, person_id"
_EDGE_COLUMNS = (
    "id, type, source_id, target_id, conversation_id, valid_from, invalidated_at, invalidated_by"
)


def _node(row: Any) -> GraphNode:
    return GraphNode(
        node_id=row.id,
        type=row.type,
        name=row.name,
        attributes=dict(row.attributes or {}),
        person_id=row.person_id,
    )


def _edge(row: Any) -> GraphEdge:
    return GraphEdge(
        edge_id=row.id,
        type=row.type,
        source_id=row.source_id,
        target_id=row.target_id,
        conversation_id=row.conversation_id,
        valid_from=row.valid_from,
        invalidated_at=row.invalidated_at,
        invalidated_by=row.invalidated_by,
    )


async def upsert_node(
    session: AsyncSession,
    *,
    agent: str,
    type: str,
    name: str,
    at: datetime,
    attributes: dict[str, Any] | None = None,
    person_id: str | None = None,
) -> str:
    """The ID of the agent's ``type`` entity called ``name``, creating it on first mention.

    New attributes are merged over the old; a person link, once set, is kept.
    """
    key = name_key(name)
    if not key:
        raise ValueError(f"an entity name needs at least one word: {name[:40]!r}")
    result = await execute_sql(
        session,
        """
        INSERT INTO graph_nodes (id, agent, type, name, name_key, attributes, person_id,
                                 created_at, updated_at)
        VALUES (:id, :agent, :type, :name, :key, CAST(:attributes AS jsonb), :person_id, :at, :at)
        ON CONFLICT ON CONSTRAINT uq_graph_node DO UPDATE
           SET attributes = graph_nodes.attributes || EXCLUDED.attributes,
               person_id = COALESCE(graph_nodes.person_id, EXCLUDED.person_id),
               updated_at = GREATEST(graph_nodes.updated_at, EXCLUDED.updated_at)
        RETURNING id
        """,
        {
            "id": new_ulid(),
            "agent": agent,
            "type": type,
            "name": name.strip(),
            "key": key,
            "attributes": json.dumps(attributes or {}),
            "person_id": person_id,
            "at": at,
        },
    )
    return str(result.scalar_one())


async def upsert_edge(
    session: AsyncSession,
    *,
    agent: str,
    type: str,
    source_id: str,
    target_id: str,
    at: datetime,
    conversation_id: str | None = None,
    exclusive: bool = False,
) -> str:
    """The ID of the active ``type`` edge from source to target, creating it if none holds.

    Args:
        session: The caller's session; the caller commits.
        agent: The owning agent.
        type: The relation's label (``lives_in``, ``works_for``).
        source_id: The subject entity.
        target_id: The object entity.
        at: When it was learned: the new edge is valid from then.
        conversation_id: The conversation it was learned from.
        exclusive: The source holds one such relation at a time (one ``lives_in``): any
            other active edge of this type from the source is invalidated by the new one.
    """
    inserted = await execute_sql(
        session,
        """
        INSERT INTO graph_edges (id, agent, type, source_id, target_id, conversation_id,
                                 valid_from)
        VALUES (:id, :agent, :type, :source, :target, :conversation, :at)
        ON CONFLICT (source_id, type, target_id) WHERE invalidated_at IS NULL DO NOTHING
        RETURNING id
        """,
        {
            "id": new_ulid(),
            "agent": agent,
            "type": type,
            "source": source_id,
            "target": target_id,
            "conversation": conversation_id,
            "at": at,
        },
    )
    edge_id = inserted.scalar_one_or_none()
    if edge_id is None:
        existing = await execute_sql(
            session,
            "SELECT id FROM graph_edges WHERE source_id = :source AND type = :type"
            " AND target_id = :target AND invalidated_at IS NULL",
            {"source": source_id, "type": type, "target": target_id},
        )
        return str(existing.scalar_one())
    if exclusive:
        await execute_sql(
            session,
            """
            UPDATE graph_edges SET invalidated_at = :at, invalidated_by = :by
             WHERE source_id = :source AND type = :type AND target_id <> :target
               AND invalidated_at IS NULL
            """,
            {"at": at, "by": edge_id, "source": source_id, "type": type, "target": target_id},
        )
    return str(edge_id)


async def invalidate_edge(
    session: AsyncSession, *, edge_id: str, at: datetime, by: str | None = None
) -> bool:
    """Mark an active edge as no longer holding from ``at``; ``False`` if it was not active."""
    result = await execute_sql(
        session,
        "UPDATE graph_edges SET invalidated_at = :at, invalidated_by = :by"
        " WHERE id = :id AND invalidated_at IS NULL",
        {"id": edge_id, "at": at, "by": by},
    )
    return bool(result.rowcount)


async def mentioned_nodes(
    session: AsyncSession, *, agent: str, input_text: str, limit: int = 8
) -> list[GraphNode]:
    """The agent's entities whose names appear, as whole words, in ``input_text``.

    Longer names first (a mention of "New York" beats one of "York").
    """
    keys = mention_keys(input_text)
    if not keys:
        return []
    result = await execute_sql(
        session,
        f"""
        SELECT {_NODE_COLUMNS} FROM graph_nodes
         WHERE agent = :agent AND name_key = ANY(CAST(:keys AS text[]))
         ORDER BY length(name_key) DESC, id
         LIMIT :limit
        """,
        {"agent": agent, "keys": keys, "limit": limit},
    )
    return [_node(row) for row in result]


async def nodes_named(session: AsyncSession, *, agent: str, names: list[str]) -> list[GraphNode]:
    """The agent's entities called any of ``names`` (matched as name keys)."""
    keys = sorted({name_key(n) for n in names} - {""})
    result = await execute_sql(
        session,
        f"SELECT {_NODE_COLUMNS} FROM graph_nodes"
        " WHERE agent = :agent AND name_key = ANY(CAST(:keys AS text[])) ORDER BY id",
        {"agent": agent, "keys": keys},
    )
    return [_node(row) for row in result]


async def _nodes(session: AsyncSession, ids: list[str]) -> dict[str, GraphNode]:
    result = await execute_sql(
        session,
        f"SELECT {_NODE_COLUMNS} FROM graph_nodes WHERE id = ANY(CAST(:ids AS varchar[]))",
        {"ids": ids},
    )
    return {row.id: _node(row) for row in result}


def _steps(as_of: datetime | None, *, with_edge: bool) -> str:
    """A lateral step from ``w.node_id`` to each neighbour, direction ignored."""
    edge = "e.id AS edge_id, " if with_edge else ""
    return f"""
        SELECT {edge}e.target_id AS next_id FROM graph_edges e
         WHERE e.source_id = w.node_id AND {_valid("e", as_of)}
        UNION ALL
        SELECT {edge}e.source_id AS next_id FROM graph_edges e
         WHERE e.target_id = w.node_id AND {_valid("e", as_of)}
    """


async def neighbourhood(
    session: AsyncSession,
    *,
    seeds: list[str],
    hops: int = 1,
    as_of: datetime | None = None,
    max_edges: int = 50,
) -> Neighbourhood:
    """The entities within ``hops`` of ``seeds`` and the edges among them that held ``as_of``.

    Edges nearest the seeds come first, newest first at each distance; past ``max_edges``
    the rest are dropped and ``truncated`` says so.
    """
    hops = max(1, min(hops, MAX_HOPS))
    if not seeds:
        return Neighbourhood(seeds=[], hops=hops, nodes=[], edges=[])
    result = await execute_sql(
        session,
        f"""
        WITH RECURSIVE walk(node_id, depth) AS (
            SELECT CAST(s AS varchar), 0 FROM unnest(CAST(:seeds AS varchar[])) AS s
            UNION
            SELECT n.next_id, w.depth + 1
              FROM walk w CROSS JOIN LATERAL ({_steps(as_of, with_edge=False)}) n
             WHERE w.depth < :hops
        ), reached AS (
            SELECT node_id, min(depth) AS depth FROM walk GROUP BY node_id
        )
        SELECT {", ".join("e." + c for c in _EDGE_COLUMNS.split(", "))}
          FROM graph_edges e
          JOIN reached s ON s.node_id = e.source_id
          JOIN reached t ON t.node_id = e.target_id
         WHERE {_valid("e", as_of)} AND least(s.depth, t.depth) < :hops
         ORDER BY least(s.depth, t.depth), e.valid_from DESC, e.id
         LIMIT :limit
        """,
        {"seeds": seeds, "hops": hops, "as_of": as_of, "limit": max_edges + 1},
    )
    edges = [_edge(row) for row in result]
    truncated = len(edges) > max_edges
    edges = edges[:max_edges]
    ids = sorted({*seeds, *(e.source_id for e in edges), *(e.target_id for e in edges)})
    nodes = await _nodes(session, ids)
    return Neighbourhood(
        seeds=seeds,
        hops=hops,
        nodes=[nodes[i] for i in ids if i in nodes],
        edges=edges,
        truncated=truncated,
    )


async def shortest_path(
    session: AsyncSession,
    *,
    source_id: str,
    target_id: str,
    max_hops: int = MAX_HOPS,
    as_of: datetime | None = None,
) -> GraphPath | None:
    """The fewest edges linking two entities (direction ignored), or ``None`` within ``max_hops``.

    The walk is breadth-first and stops at the first arrival, so a near pair costs little
    however large the graph.
    """
    max_hops = max(1, min(max_hops, MAX_HOPS))
    result = await execute_sql(
        session,
        f"""
        WITH RECURSIVE walk(node_id, nodes, edges, depth) AS (
            SELECT CAST(:source AS varchar), ARRAY[CAST(:source AS varchar)],
                   CAST(ARRAY[] AS varchar[]), 0
            UNION ALL
            SELECT n.next_id, w.nodes || n.next_id, w.edges || n.edge_id, w.depth + 1
              FROM walk w CROSS JOIN LATERAL ({_steps(as_of, with_edge=True)}) n
             WHERE w.depth < :max_hops AND w.node_id <> :target
               AND NOT n.next_id = ANY(w.nodes)
        )
        SELECT nodes, edges FROM walk WHERE node_id = :target LIMIT 1
        """,
        {"source": source_id, "target": target_id, "max_hops": max_hops, "as_of": as_of},
    )
    row = result.first()
    if row is None:
        return None
    node_ids, edge_ids = list(row.nodes), list(row.edges)
    nodes = await _nodes(session, node_ids)
    found = await execute_sql(
        session,
        f"SELECT {_EDGE_COLUMNS} FROM graph_edges WHERE id = ANY(CAST(:ids AS varchar[]))",
        {"ids": edge_ids},
    )
    edges = {r.id: _edge(r) for r in found}
    return GraphPath(
        source_id=source_id,
        target_id=target_id,
        nodes=[nodes[i] for i in node_ids],
        edges=[edges[i] for i in edge_ids],
    )
