"""The knowledge graph: upsert entities and relations, and read neighbourhoods and paths.

Edges are never deleted: a contradicted edge gets ``invalidated_at`` and the ID of the edge
that replaced it, so every read can be asked "as of" a time. Reads walk the graph with
recursive CTEs bounded by hop count and row count, so a hub entity cannot make a prompt slow.

Each read is written once, with psycopg's ``%(name)s`` placeholders, and runs either in a
session (the ``query_graph`` tool) or on the driver lane (``store.lane``: the context source,
which reads on every prompt); the functions ending in ``_on`` take the lane.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, LiteralString

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.graph import MAX_HOPS, GraphEdge, GraphNode, GraphPath, Neighbourhood
from schemas.ids import new_ulid
from store.lane import Lane
from store.sql import Reader, execute, in_session

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


def _valid(alias: LiteralString, as_of: datetime | None) -> LiteralString:
    """SQL for "edge ``alias`` held at ``as_of``" (now when ``None``)."""
    if as_of is None:
        return f"{alias}.invalidated_at IS NULL"
    return (
        f"{alias}.valid_from <= %(as_of)s"
        f" AND ({alias}.invalidated_at IS NULL OR {alias}.invalidated_at > %(as_of)s)"
    )


_NODE_COLUMNS = "id, type, name, attributes, person_id"
_EDGE_COLUMNS = (
    "id, type, source_id, target_id, conversation_id, valid_from, invalidated_at, invalidated_by"
)


def _node(row: Mapping[str, Any]) -> GraphNode:
    return GraphNode(
        node_id=row["id"],
        type=row["type"],
        name=row["name"],
        attributes=dict(row["attributes"] or {}),
        person_id=row["person_id"],
    )


def _edge(row: Mapping[str, Any]) -> GraphEdge:
    return GraphEdge(
        edge_id=row["id"],
        type=row["type"],
        source_id=row["source_id"],
        target_id=row["target_id"],
        conversation_id=row["conversation_id"],
        valid_from=row["valid_from"],
        invalidated_at=row["invalidated_at"],
        invalidated_by=row["invalidated_by"],
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
    result = await execute(
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
    inserted = await execute(
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
        existing = await execute(
            session,
            "SELECT id FROM graph_edges WHERE source_id = :source AND type = :type"
            " AND target_id = :target AND invalidated_at IS NULL",
            {"source": source_id, "type": type, "target": target_id},
        )
        return str(existing.scalar_one())
    if exclusive:
        await execute(
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
    result = await execute(
        session,
        "UPDATE graph_edges SET invalidated_at = :at, invalidated_by = :by"
        " WHERE id = :id AND invalidated_at IS NULL",
        {"id": edge_id, "at": at, "by": by},
    )
    return bool(result.rowcount)


async def _mentioned(read: Reader, agent: str, input_text: str, limit: int) -> list[GraphNode]:
    keys = mention_keys(input_text)
    if not keys:
        return []
    rows = await read(
        f"""
        SELECT {_NODE_COLUMNS} FROM graph_nodes
         WHERE agent = %(agent)s AND name_key = ANY(CAST(%(keys)s AS text[]))
         ORDER BY length(name_key) DESC, id
         LIMIT %(limit)s
        """,
        {"agent": agent, "keys": keys, "limit": limit},
    )
    return [_node(row) for row in rows]


async def mentioned_nodes(
    session: AsyncSession, *, agent: str, input_text: str, limit: int = 8
) -> list[GraphNode]:
    """The agent's entities whose names appear, as whole words, in ``input_text``.

    Longer names first (a mention of "New York" beats one of "York").
    """
    return await _mentioned(in_session(session), agent, input_text, limit)


async def mentioned_nodes_on(
    lane: Lane, *, agent: str, input_text: str, limit: int = 8
) -> list[GraphNode]:
    """:func:`mentioned_nodes` on the driver lane."""
    return await _mentioned(lane.rows, agent, input_text, limit)


async def nodes_named(session: AsyncSession, *, agent: str, names: list[str]) -> list[GraphNode]:
    """The agent's entities called any of ``names`` (matched as name keys)."""
    keys = sorted({name_key(n) for n in names} - {""})
    rows = await in_session(session)(
        f"SELECT {_NODE_COLUMNS} FROM graph_nodes"
        " WHERE agent = %(agent)s AND name_key = ANY(CAST(%(keys)s AS text[])) ORDER BY id",
        {"agent": agent, "keys": keys},
    )
    return [_node(row) for row in rows]


async def _nodes(read: Reader, ids: list[str]) -> dict[str, GraphNode]:
    rows = await read(
        f"SELECT {_NODE_COLUMNS} FROM graph_nodes WHERE id = ANY(CAST(%(ids)s AS varchar[]))",
        {"ids": ids},
    )
    return {row["id"]: _node(row) for row in rows}


def _steps(as_of: datetime | None, *, with_edge: bool) -> LiteralString:
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
    """The relations within ``hops`` of ``seeds`` that held ``as_of``, and their entities.

    A relation is within ``hops`` when it touches an entity fewer than ``hops`` steps from a
    seed. The walk only reaches those inner entities, and their relations are read through
    the endpoint indexes, so one hop costs an index lookup per seed however large the graph.
    Relations nearest the seeds come first, newest first at each distance; past
    ``max_edges`` the rest are dropped and ``truncated`` says so.
    """
    return await _neighbourhood(in_session(session), seeds, hops, as_of, max_edges)


async def neighbourhood_on(
    lane: Lane,
    *,
    seeds: list[str],
    hops: int = 1,
    as_of: datetime | None = None,
    max_edges: int = 50,
) -> Neighbourhood:
    """:func:`neighbourhood` on the driver lane."""
    return await _neighbourhood(lane.rows, seeds, hops, as_of, max_edges)


async def _neighbourhood(
    read: Reader, seeds: list[str], hops: int, as_of: datetime | None, max_edges: int
) -> Neighbourhood:
    """:func:`neighbourhood`, its statements run by ``read``."""
    hops = max(1, min(hops, MAX_HOPS))
    if not seeds:
        return Neighbourhood(seeds=[], hops=hops, nodes=[], edges=[])
    rows = await read(
        f"""
        WITH RECURSIVE walk(node_id, depth) AS (
            SELECT CAST(s AS varchar), 0 FROM unnest(CAST(%(seeds)s AS varchar[])) AS s
            UNION
            SELECT n.next_id, w.depth + 1
              FROM walk w CROSS JOIN LATERAL ({_steps(as_of, with_edge=False)}) n
             WHERE w.depth < %(hops)s - 1
        ), inner_nodes AS (
            SELECT node_id, min(depth) AS depth FROM walk GROUP BY node_id
        ), near AS (
            SELECT x.id, min(r.depth) AS depth
              FROM inner_nodes r CROSS JOIN LATERAL (
                SELECT e.id FROM graph_edges e
                 WHERE e.source_id = r.node_id AND {_valid("e", as_of)}
                UNION ALL
                SELECT e.id FROM graph_edges e
                 WHERE e.target_id = r.node_id AND {_valid("e", as_of)}
              ) x
             GROUP BY x.id
        )
        SELECT {", ".join("e." + c for c in _EDGE_COLUMNS.split(", "))}
          FROM near JOIN graph_edges e ON e.id = near.id
         ORDER BY near.depth, e.valid_from DESC, e.id
         LIMIT %(limit)s
        """,
        {"seeds": seeds, "hops": hops, "as_of": as_of, "limit": max_edges + 1},
    )
    edges = [_edge(row) for row in rows]
    truncated = len(edges) > max_edges
    edges = edges[:max_edges]
    ids = sorted({*seeds, *(e.source_id for e in edges), *(e.target_id for e in edges)})
    nodes = await _nodes(read, ids)
    return Neighbourhood(
        seeds=seeds,
        hops=hops,
        nodes=[nodes[i] for i in ids if i in nodes],
        edges=edges,
        truncated=truncated,
    )


PATH_LEVEL_ROWS = 20_000
"""Most relations one level of a path search may read; past it the search gives up."""


async def _level(
    read: Reader, frontier: list[str], as_of: datetime | None
) -> list[tuple[str, str, str]] | None:
    """(edge, from, to) for every edge touching ``frontier``; ``None`` past the row cap."""
    found = await read(
        f"""
        SELECT e.id, e.source_id AS here, e.target_id AS there FROM graph_edges e
         WHERE e.source_id = ANY(CAST(%(frontier)s AS varchar[])) AND {_valid("e", as_of)}
        UNION ALL
        SELECT e.id, e.target_id, e.source_id FROM graph_edges e
         WHERE e.target_id = ANY(CAST(%(frontier)s AS varchar[])) AND {_valid("e", as_of)}
        ORDER BY 1
        LIMIT %(limit)s
        """,
        {"frontier": frontier, "as_of": as_of, "limit": PATH_LEVEL_ROWS + 1},
    )
    rows = [(str(row["id"]), str(row["here"]), str(row["there"])) for row in found]
    return None if len(rows) > PATH_LEVEL_ROWS else rows


# A search side's visited nodes: node -> (depth, previous node, edge walked), the start's None.
_Visited = dict[str, tuple[int, str, str] | None]


def _depth(visited: _Visited, node: str) -> int:
    step = visited[node]
    return 0 if step is None else step[0]


def _walk_back(visited: _Visited, node: str) -> tuple[list[str], list[str]]:
    """Nodes and edges from the side's start to ``node``."""
    nodes, edges = [node], []
    step = visited[node]
    while step is not None:
        _, previous, edge = step
        nodes.append(previous)
        edges.append(edge)
        step = visited[previous]
    return nodes[::-1], edges[::-1]


async def shortest_path(
    session: AsyncSession,
    *,
    source_id: str,
    target_id: str,
    max_hops: int = MAX_HOPS,
    as_of: datetime | None = None,
) -> GraphPath | None:
    """The fewest edges linking two entities (direction ignored), or ``None`` within ``max_hops``.

    A breadth-first search from both ends, one query per level, each level from the side with
    the smaller frontier and each node visited once: a hub entity between them costs one read
    of its relations, not one per path through it (a recursive CTE enumerating paths grows as
    degree^hops). A level that would read more than ``PATH_LEVEL_ROWS`` relations ends the
    search with ``None``.
    """
    return await _shortest_path(in_session(session), source_id, target_id, max_hops, as_of)


async def shortest_path_on(
    lane: Lane,
    *,
    source_id: str,
    target_id: str,
    max_hops: int = MAX_HOPS,
    as_of: datetime | None = None,
) -> GraphPath | None:
    """:func:`shortest_path` on the driver lane."""
    return await _shortest_path(lane.rows, source_id, target_id, max_hops, as_of)


async def _shortest_path(
    read: Reader, source_id: str, target_id: str, max_hops: int, as_of: datetime | None
) -> GraphPath | None:
    """:func:`shortest_path`, its statements run by ``read``."""
    max_hops = max(1, min(max_hops, MAX_HOPS))
    sides: tuple[_Visited, _Visited] = ({source_id: None}, {target_id: None})
    frontiers = ([source_id], [target_id])
    meeting = source_id if source_id == target_id else None
    for _ in range(max_hops):
        if meeting is not None:
            break
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        visited, other = sides[side], sides[1 - side]
        rows = await _level(read, frontiers[side], as_of)
        if rows is None:
            return None
        reached: list[str] = []
        for edge, here, there in rows:
            if there not in visited:
                visited[there] = (_depth(visited, here) + 1, here, edge)
                reached.append(there)
        if not reached:
            return None
        frontiers = (reached, frontiers[1]) if side == 0 else (frontiers[0], reached)
        meets = [n for n in reached if n in other]
        if meets:
            meeting = min(meets, key=lambda n: (_depth(other, n), n))
    if meeting is None:
        return None
    head_nodes, head_edges = _walk_back(sides[0], meeting)
    tail_nodes, tail_edges = _walk_back(sides[1], meeting)
    node_ids = head_nodes + tail_nodes[::-1][1:]
    edge_ids = head_edges + tail_edges[::-1]
    nodes = await _nodes(read, node_ids)
    found = await read(
        f"SELECT {_EDGE_COLUMNS} FROM graph_edges WHERE id = ANY(CAST(%(ids)s AS varchar[]))",
        {"ids": edge_ids},
    )
    edges = {r["id"]: _edge(r) for r in found}
    return GraphPath(
        source_id=source_id,
        target_id=target_id,
        nodes=[nodes[i] for i in node_ids],
        edges=[edges[i] for i in edge_ids],
    )
