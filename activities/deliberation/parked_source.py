"""Context source: deferred conclusions parked for this agent on this channel.

A deferred critique parks its conclusion keyed by agent and channel; the next respond prompt on
that channel shows the newest waiting ones as the agent's own second thoughts. The block's
``extra`` lists their IDs; they are consumed only when the turn is transmitted (a turn that
stays silent leaves them for the next), and only those whose note the prompt really held.
"""

from __future__ import annotations

from pydantic import ValidationError

from activities.context.fencing import PARKED, neutralise
from activities.context.model import ContextBlock, ContextRequest, Trim
from activities.deliberation.calls import clip
from activities.prompts import load
from schemas.deliberation import DeliberationSettings, Objection
from schemas.models import TaskType
from store.db import Database
from store.queries.deliberation import waiting_conclusions
from store.tables.deliberation import ParkedConclusionRow

SOURCE = "parked"
POINTS = 3
"""Objections shown per conclusion: the gist, not the whole critique."""


def render_conclusion(row: ParkedConclusionRow) -> str:
    """One parked conclusion as a note in the prompt (deterministic: consumption checks it).

    The block fences every note together as the agent's second thoughts; a note is made inert
    here already, so the text consumption looks for is exactly what the prompt holds.
    """
    objections: list[Objection] = []
    for item in row.objections[:POINTS]:
        try:
            objections.append(Objection.model_validate(item))
        except ValidationError:
            continue
    points = "; ".join(
        f"{o.type.replace('_', ' ')}: {clip(o.explanation, 240)}" for o in objections
    )
    lines = [
        f"- You said: {clip(row.candidate, 300)}",
        f"  On reflection: {points or 'see below'}.",
    ]
    if row.refined:
        lines.append(f"  What you would say now: {clip(row.refined, 600)}")
    return neutralise("\n".join(lines))


class ParkedSource:
    """The agent's parked second thoughts on this channel (optional: fails soft)."""

    name = SOURCE
    required = False

    def __init__(self, db: Database, settings: DeliberationSettings) -> None:
        self._db = db
        self._settings = settings

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The waiting conclusions, newest first; nothing for prompts other than replies."""
        data = request.input
        if data.task is not TaskType.RESPOND:
            return None
        rows = await waiting_conclusions(
            self._db.lane,
            agent=data.agent,
            channel_key=data.channel.key,
            now=data.now,
            limit=self._settings.parked_limit,
        )
        if not rows:
            return None
        return ContextBlock(
            source=self.name,
            title=load("deliberation/parked.md"),
            items=[render_conclusion(row) for row in rows],
            order=70,
            trim=Trim.LAST_FIRST,
            share=0.1,
            extra={"ids": [row.id for row in rows]},
            provenance=PARKED,
        )
