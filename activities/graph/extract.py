"""Entity and relation extraction after an exchange, upserted into the knowledge graph.

Background work, never on the reply's path: it costs a model call, and a reply must not wait
for the graph to grow. The exchange goes to the model fenced, turn by turn, and the reply is
schema-constrained and read strictly (a reply that does not fit is tried once more by the
activity's retry, then dropped: never guessed). Upserts are idempotent, so a retried or
repeated extraction of the same exchange changes nothing.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity

from activities.context.fencing import DIALOG, OWN_WORDS, fence
from activities.gateway.gateway import ModelGateway
from activities.memory.formation.calls import complete_json
from activities.memory.formation.prompts import fill
from activities.prompts import load
from schemas.dialog import Role
from schemas.graph import ExtractGraphInput, ExtractGraphResult, GraphExtraction, GraphSettings
from schemas.models import ChatMessage, ModelRequest, TaskType
from schemas.observations import OFF_ON_PLAN
from store.db import Database
from store.queries.agents import get_agent
from store.queries.dialog import load_turns
from store.queries.graph import name_key, upsert_edge, upsert_node
from store.queries.memory_formation import range_turns

log = logging.getLogger(__name__)


def clean_label(text: str) -> str:
    """``text`` without control or format characters (NUL, right-to-left overrides)."""
    kept = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    return " ".join(kept.split())


def _key(name: str) -> str:
    return name_key(clean_label(name))


def relation_label(text: str) -> str:
    """A relation as snake_case words (``Lives In`` -> ``lives_in``)."""
    return name_key(clean_label(text)).replace(" ", "_")[:32]


class SaidTurn(Protocol):
    """What extraction reads of a turn: a stored dialog turn or a consolidated range's."""

    @property
    def role(self) -> str:
        """``agent`` for the agent's own words, else a person's."""

    @property
    def speaker_name(self) -> str:
        """Who said it, as the prompt names them."""

    @property
    def text(self) -> str:
        """What was said."""


def extraction_request(agent_name: str, turns: Sequence[SaidTurn]) -> ModelRequest:
    """The extraction call: the prompt, then the exchange with every turn fenced."""
    exchange = "\n".join(
        fence(f"{turn.speaker_name}: {turn.text}", OWN_WORDS if turn.role == Role.AGENT else DIALOG)
        for turn in turns
    )
    return ModelRequest(
        task=TaskType.OBSERVE,
        system=fill(load("graph/extraction.md"), name=agent_name),
        messages=[ChatMessage(role="user", content=exchange)],
        temperature=0.0,
        response_schema=GraphExtraction.model_json_schema(),
    )


async def apply_extraction(
    session: AsyncSession,
    *,
    agent: str,
    extraction: GraphExtraction,
    conversation_id: str | None,
    at: datetime,
) -> ExtractGraphResult:
    """Upsert the extraction's entities and relations; the caller commits.

    A relation naming an entity the reply did not list gets a ``thing`` node; a name with no
    word in it is skipped.
    """
    types = {_key(e.name): clean_label(e.type).lower() or "thing" for e in extraction.entities}
    names = {_key(e.name): clean_label(e.name) for e in extraction.entities}
    ids: dict[str, str] = {}

    async def node(name: str) -> str | None:
        key = _key(name)
        if not key:
            return None
        if key not in ids:
            ids[key] = await upsert_node(
                session,
                agent=agent,
                type=types.get(key, "thing"),
                name=names.get(key, clean_label(name)),
                at=at,
            )
        return ids[key]

    for entity in extraction.entities:
        await node(entity.name)
    edges = 0
    for relation in extraction.relations:
        source, target, label = (
            await node(relation.source),
            await node(relation.target),
            relation_label(relation.relation),
        )
        if source is None or target is None or not label or source == target:
            continue
        await upsert_edge(
            session,
            agent=agent,
            type=label,
            source_id=source,
            target_id=target,
            at=at,
            conversation_id=conversation_id,
            exclusive=relation.exclusive,
        )
        edges += 1
    return ExtractGraphResult(nodes=len(ids), edges=edges)


class GraphActivities:
    """Grows the knowledge graph from conversations."""

    def __init__(self, db: Database, gateway: ModelGateway, settings: GraphSettings) -> None:
        self._db = db
        self._gateway = gateway
        self._settings = settings

    @activity.defn(name="graph.extract")
    async def extract(self, data: ExtractGraphInput) -> ExtractGraphResult:
        """Extract entities and relations from the exchange and upsert them (off: nothing)."""
        if not self._settings.enabled:
            return ExtractGraphResult()
        async with self._db.session() as session:
            turns: Sequence[SaidTurn]
            if data.through_turn is not None:
                in_range = await range_turns(
                    session,
                    conversation_id=data.conversation_id,
                    after_turn=data.after_turn,
                    through_turn=data.through_turn,
                )
                # The latest turns only: a range is up to a consolidation chunk, and a small
                # local model must not read all of it for a background enrichment.
                turns = in_range[-self._settings.extract_turns :]
            else:
                turns = await load_turns(self._db.lane, turn_ids=data.turn_ids)
            agent = await get_agent(session, handle=data.agent)
        if not turns or agent is None:
            return ExtractGraphResult()
        if not self._gateway.runs(TaskType.OBSERVE):
            return ExtractGraphResult(skipped=OFF_ON_PLAN)
        reply = await complete_json(
            self._gateway, extraction_request(agent.name, turns), GraphExtraction
        )
        async with self._db.session() as session:
            result = await apply_extraction(
                session,
                agent=data.agent,
                extraction=reply,
                conversation_id=data.conversation_id,
                at=data.at,
            )
            await session.commit()
        log.info(
            "graph: %d entities, %d relations from conversation %s",
            result.nodes,
            result.edges,
            data.conversation_id,
        )
        return result
