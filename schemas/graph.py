"""The knowledge graph on the wire: entities, relations, neighbourhoods and paths."""

from __future__ import annotations

from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from schemas.events import Wire
from schemas.ids import AgentHandle, Ulid

MAX_HOPS = 3
"""The deepest neighbourhood or path the graph is asked for: cost grows with degree^hops."""


class GraphNode(Wire):
    """An entity in the agent's life."""

    node_id: Ulid
    type: str
    name: str
    attributes: dict[str, Any] = Field(default_factory=dict)
    person_id: Ulid | None = None


class GraphEdge(Wire):
    """A relation from ``source_id`` to ``target_id``, valid from one time until invalidated."""

    edge_id: Ulid
    type: str
    source_id: Ulid
    target_id: Ulid
    conversation_id: Ulid | None = None
    valid_from: AwareDatetime
    invalidated_at: AwareDatetime | None = None
    invalidated_by: Ulid | None = None


class Neighbourhood(Wire):
    """Nodes within ``hops`` of the seeds and the edges among them, as of a time."""

    seeds: list[Ulid]
    hops: int
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool = False


class GraphPath(Wire):
    """The shortest chain of edges between two nodes (direction ignored)."""

    source_id: Ulid
    target_id: Ulid
    nodes: list[GraphNode]
    edges: list[GraphEdge]


class GraphQueryInput(Wire):
    """What the ``query_graph`` tool and the context source ask of the store."""

    agent: AgentHandle
    names: list[str] = Field(min_length=1, max_length=8)
    hops: int = Field(default=1, ge=1, le=MAX_HOPS)
    as_of: AwareDatetime | None = None


class GraphSettings(BaseModel):
    """The knowledge graph (``PERSYN_GRAPH__<FIELD>``): optional, and it fails soft."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(
        default=True, description="Read and grow the graph; off, no prompt or tool touches it."
    )
    context_hops: int = Field(
        default=1,
        ge=1,
        le=MAX_HOPS,
        description="Neighbourhood depth around mentioned entities (2 costs ~3x more with hubs).",
    )
    context_edges: int = Field(
        default=30, ge=1, le=200, description="Most relations one prompt's graph block shows."
    )
    context_mentions: int = Field(
        default=6, ge=1, le=8, description="Most entities matched in one input."
    )
    extract_turns: int = Field(
        default=24,
        ge=1,
        le=64,
        description="Most turns of a consolidated range one extraction reads (its latest).",
    )


class ExtractedEntity(Wire):
    """An entity named in an exchange, as the extraction call reports it."""

    name: str = Field(min_length=1, max_length=80)
    type: str = Field(min_length=1, max_length=32, description="person, place, organisation ...")


class ExtractedRelation(Wire):
    """A relation stated in an exchange: ``source`` ``relation`` ``target``."""

    source: str = Field(min_length=1, max_length=80)
    relation: str = Field(min_length=1, max_length=32, description="snake_case: lives_in")
    target: str = Field(min_length=1, max_length=80)
    exclusive: bool = Field(
        default=False, description="The source holds one such relation at a time (lives_in)."
    )


class GraphExtraction(Wire):
    """The extraction call's whole reply (kept small: local models compile it to a grammar)."""

    entities: list[ExtractedEntity] = Field(default_factory=list, max_length=12)
    relations: list[ExtractedRelation] = Field(default_factory=list, max_length=12)


class ExtractGraphInput(Wire):
    """Extract entities and relations from an exchange and upsert them.

    The exchange is either ``turn_ids`` or the range after ``after_turn`` through
    ``through_turn`` (the one a consolidation covers; only its latest turns are read).
    """

    agent: AgentHandle
    conversation_id: Ulid
    turn_ids: list[Ulid] = Field(default_factory=list, max_length=64)
    after_turn: Ulid | None = None
    through_turn: Ulid | None = None
    at: AwareDatetime


class ExtractGraphResult(Wire):
    """What one extraction changed."""

    nodes: int = 0
    edges: int = 0
    skipped: str | None = Field(
        default=None, description="Why nothing was asked of the model (its plan has it off)."
    )
