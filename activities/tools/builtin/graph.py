"""``query_graph``: the agent asks its knowledge graph how entities relate, now or as of a time."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, Field

from activities.graph.render import neighbourhood_lines, path_line
from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.graph import MAX_HOPS
from store.queries.graph import neighbourhood, nodes_named, shortest_path

MAX_RELATIONS = 50
"""Most relations one answer lists."""


class QueryGraphInput(ToolInput):
    """Input of ``query_graph``."""

    names: list[str] = Field(
        min_length=1,
        max_length=2,
        description="One entity's name (its neighbourhood), or two (the path between them).",
    )
    hops: int = Field(default=1, ge=1, le=MAX_HOPS, description="Neighbourhood depth.")
    as_of: AwareDatetime | None = Field(
        default=None, description="Answer as the graph stood then (ISO 8601 with offset)."
    )


class GraphAnswer(BaseModel):
    """Relations, one per line: ``A (type) -[relation]-> B (type) (since ..., until ...)``."""

    mode: Literal["neighbourhood", "path"]
    lines: list[str]


class QueryGraph(Tool):
    """Neighbourhoods and shortest paths in the agent's knowledge graph."""

    name = "query_graph"
    description = (
        "Look up how people, places and things relate in your knowledge graph, learned from "
        "past conversations. One name: its relations within `hops` steps. Two names: the "
        "shortest chain of relations between them. `as_of` asks how things stood at a past time."
    )
    input_model = QueryGraphInput
    output_model = GraphAnswer

    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps

    async def run(self, call: ToolRun, args: QueryGraphInput) -> GraphAnswer:
        """Find the named entities, then their neighbourhood or the path between them."""
        as_of: datetime | None = args.as_of
        async with self._deps.db.session() as session:
            found = {}
            for name in args.names:
                nodes = await nodes_named(session, agent=call.context.agent, names=[name])
                if not nodes:
                    raise ToolError(f"nothing called {name[:80]!r} is in your graph")
                found[name] = nodes[0]
            if len(args.names) == 1:
                seeds = [n.node_id for n in found.values()]
                hood = await neighbourhood(
                    session, seeds=seeds, hops=args.hops, as_of=as_of, max_edges=MAX_RELATIONS
                )
                return GraphAnswer(mode="neighbourhood", lines=neighbourhood_lines(hood))
            source, target = (found[n] for n in args.names)
            path = await shortest_path(
                session,
                source_id=source.node_id,
                target_id=target.node_id,
                max_hops=MAX_HOPS,
                as_of=as_of,
            )
        if path is None:
            return GraphAnswer(
                mode="path", lines=[f"no chain of at most {MAX_HOPS} relations links them"]
            )
        return GraphAnswer(mode="path", lines=[path_line(path)])
