"""The knowledge-graph context source: how the entities mentioned in the input relate.

Entities are found by their names appearing in the input as whole words; the block shows
their n-hop neighbourhood and the shortest paths between each pair. The graph is optional:
with it switched off the source adds nothing, and when the store fails or is slow the
assembler drops the block (this source is not required) and the reply goes out without it.
"""

from __future__ import annotations

import asyncio
from itertools import combinations

from activities.context.fencing import Provenance
from activities.context.model import ContextBlock, ContextRequest, Trim
from activities.graph.render import neighbourhood_lines, path_line
from schemas.graph import GraphSettings
from store.db import Database
from store.queries.graph import mentioned_nodes_on, neighbourhood_on, shortest_path_on

GRAPH = Provenance(
    source="graph",
    origin="relations you extracted from past conversations, with when each held",
    trust="noted, not checked: people may be wrong, joking or lying",
)

TIMEOUT_SECONDS = 0.5
"""Longest the graph may hold up a prompt; past it the block is dropped."""

MAX_PATHS = 2
"""Most entity pairs whose shortest path is looked up for one input."""

PATH_HOPS = 2
"""Longest path the prompt looks for (the ``query_graph`` tool may go further): paths are
the graph's dearest read, and a hub between two entities makes each extra hop costly."""


class GraphSource:
    """Neighbourhoods of, and paths between, the entities the input mentions."""

    name = "graph"
    required = False

    def __init__(self, db: Database, settings: GraphSettings) -> None:
        self._db = db
        self._settings = settings

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The graph block, or ``None`` when the graph is off or nothing known is mentioned."""
        if not self._settings.enabled or not request.input.event.text.strip():
            return None
        lines = await asyncio.wait_for(self._lines(request), timeout=TIMEOUT_SECONDS)
        if not lines:
            return None
        return ContextBlock(
            source=self.name,
            title="How the people and things just mentioned relate, as far as you know:",
            items=lines,
            order=35,
            trim=Trim.LAST_FIRST,
            provenance=GRAPH,
            extra={"lines": len(lines)},
        )

    async def _lines(self, request: ContextRequest) -> list[str]:
        settings = self._settings
        lane = self._db.lane
        mentioned = await mentioned_nodes_on(
            lane,
            agent=request.input.agent,
            input_text=request.input.event.text,
            limit=settings.context_mentions,
        )
        if not mentioned:
            return []
        seeds = [n.node_id for n in mentioned]
        found = await neighbourhood_on(
            lane, seeds=seeds, hops=settings.context_hops, max_edges=settings.context_edges
        )
        paths = []
        for source, target in list(combinations(seeds, 2))[:MAX_PATHS]:
            path = await shortest_path_on(
                lane, source_id=source, target_id=target, max_hops=PATH_HOPS
            )
            if path is not None and len(path.edges) > 1:  # one edge is in the neighbourhood
                paths.append(path_line(path))
        return [*paths, *neighbourhood_lines(found)]
