"""Graph results as short lines a model reads: ``Ana -[works_for]-> Acme (since 2026-03-02)``."""

from __future__ import annotations

from schemas.graph import GraphEdge, GraphNode, GraphPath, Neighbourhood


def _label(node: GraphNode | None, node_id: str) -> str:
    return f"{node.name} ({node.type})" if node else node_id


def edge_line(edge: GraphEdge, nodes: dict[str, GraphNode]) -> str:
    """One relation with its time span."""
    span = f"since {edge.valid_from:%Y-%m-%d}"
    if edge.invalidated_at is not None:
        span += f", until {edge.invalidated_at:%Y-%m-%d}"
    source = _label(nodes.get(edge.source_id), edge.source_id)
    target = _label(nodes.get(edge.target_id), edge.target_id)
    return f"{source} -[{edge.type}]-> {target} ({span})"


def neighbourhood_lines(found: Neighbourhood) -> list[str]:
    """Each relation of a neighbourhood, nearest the mentioned entities first."""
    nodes = {n.node_id: n for n in found.nodes}
    lines = [edge_line(edge, nodes) for edge in found.edges]
    if found.truncated:
        lines.append(f"(more relations within {found.hops} hops were left out)")
    return lines


def path_line(path: GraphPath) -> str:
    """A chain of relations from one entity to another, direction marked on each step."""
    nodes = {n.node_id: n for n in path.nodes}
    parts = [_label(nodes.get(path.source_id), path.source_id)]
    at = path.source_id
    for edge in path.edges:
        forward = edge.source_id == at
        at = edge.target_id if forward else edge.source_id
        arrow = f"-[{edge.type}]->" if forward else f"<-[{edge.type}]-"
        parts += [arrow, _label(nodes.get(at), at)]
    return "path: " + " ".join(parts)
