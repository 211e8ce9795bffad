"""Memory tools: search stored dialog, and remember harder (a memory's verbatim dialog).

Both keep to the conversation's memory compartment (its channel and channel group; on the
agent's own self channels, all of its dialog), and remember harder also checks the record's
sensitivity against who is present, exactly as recall does.

Both hand back other people's words. The tool loop fences every result as outside data
(:mod:`activities.tools.rounds`); inside it, each result says what it is and each turn who
wrote it and whether it was imported, so the model can weigh it and never takes it as orders.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from pydantic import BaseModel, Field, ValidationError

from activities.context.fencing import DIALOG, IMPORTED, MEMORY, PAST_DIALOG
from activities.memory.encoder import Encoder
from activities.memory.remember import RememberHarderError, drill_down, remember_harder
from activities.memory.search.service import DialogSearch
from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.autonomy import SELF_SERVICE, GoalPublic, GoalStatus
from schemas.ids import InvalidIdError, new_ulid
from schemas.memory import Sensitivity
from schemas.recall import RememberHarderResult
from store.queries.imports import imported_conversations
from store.queries.memory import NewRecord, insert_record
from store.queries.people import ensure_channel
from store.queries.recall import memory_channels
from store.queries.search import SearchInputError

log = logging.getLogger(__name__)

TEXT_CHARS = 600
"""Longest turn text a search hit shows (the model can remember harder for the rest)."""

PROVENANCE = f"{PAST_DIALOG.origin}: {PAST_DIALOG.trust}"
"""What a dialog result is, told to the model at the head of the result."""


def said_by(role: str) -> str:
    """Who wrote a stored turn, in words the model reads."""
    return "you" if role == "agent" else "a person"


class Hit(BaseModel):
    """A turn that matched, with who said it and where it came from."""

    turn_id: str
    conversation_id: str
    channel: str
    source: str = Field(description="dialog (lived), or imported (from another record).")
    said_by: str
    speaker: str
    at: datetime
    text: str
    score: float


class Hits(BaseModel):
    """Search results, best first."""

    provenance: str = PROVENANCE
    hits: list[Hit]
    note: str | None = None


class RememberedDialog(RememberHarderResult):
    """Remember harder's result as the model reads it: what it is, then the record and turns."""

    provenance: str = PROVENANCE
    source: str = Field(description="dialog (lived), or imported (from another record).")


class SearchMemoryInput(ToolInput):
    """Input of ``search_memory``: a ranking query and/or filters."""

    query: str = Field(default="", description="What to look for, in words (ranks results).")
    keyword: str | None = Field(default=None, description="Only turns containing these words.")
    regex: str | None = Field(default=None, description="Only turns matching this POSIX regex.")
    since: datetime | None = Field(default=None, description="Only turns at or after this time.")
    until: datetime | None = Field(default=None, description="Only turns before this time.")
    tags: list[str] = Field(default_factory=list, description="Only turns with all these tags.")
    limit: int = Field(default=8, ge=1, le=20)


class SearchMemory(Tool):
    """Search the agent's stored dialog."""

    name = "search_memory"
    description = (
        "Search what was actually said in your past conversations on this channel: by meaning "
        "and words, with optional keyword, regular-expression, date-range and tag filters."
    )
    input_model = SearchMemoryInput
    output_model = Hits

    def __init__(self, deps: ToolDeps, encoder: Encoder | None) -> None:
        self._deps = deps
        self._search = DialogSearch(deps.db, encoder)

    async def run(self, call: ToolRun, args: SearchMemoryInput) -> Hits:
        """Search within the conversation's memory compartment."""
        context = call.context
        channel_ids: list[str] | None = None
        if context.channel.service != SELF_SERVICE:
            async with self._deps.db.session() as session:
                channel_ids = await memory_channels(
                    session, agent=context.agent, channel_key=context.channel.key
                )
        try:
            found = await self._search.search(
                context.agent,
                args.query,
                channel_ids=channel_ids,
                keyword=args.keyword,
                regex=args.regex,
                since=args.since,
                until=args.until,
                tags=args.tags,
                limit=args.limit,
            )
        except (SearchInputError, ValidationError, ValueError) as err:
            raise ToolError(str(err).splitlines()[0]) from None
        async with self._deps.db.session() as session:
            imported = await imported_conversations(
                session, conversation_ids=list({h.conversation_id for h in found})
            )
        hits = [
            Hit(
                turn_id=h.turn_id,
                conversation_id=h.conversation_id,
                channel=h.channel,
                source=(IMPORTED if h.conversation_id in imported else DIALOG).source,
                said_by=said_by(h.role),
                speaker=h.speaker_name,
                at=h.at,
                text=h.text if len(h.text) <= TEXT_CHARS else h.text[:TEXT_CHARS] + "...",
                score=round(h.score, 4),
            )
            for h in found
        ]
        return Hits(hits=hits, note=None if hits else "nothing matched")


class RememberHarderInput(ToolInput):
    """Input of ``remember_harder``."""

    memory_id: str = Field(description="The ID shown beside a memory in your context.")
    limit: int = Field(default=40, ge=1, le=200, description="Most turns to read.")


class RememberHarder(Tool):
    """Read the verbatim dialog a memory was formed from."""

    name = "remember_harder"
    description = (
        "Read the exact exchange behind one of your memories, by its ID, before asserting "
        "something a weakly recalled memory only suggests. For a recollection, it lists the "
        "memories folded beneath it."
    )
    input_model = RememberHarderInput

    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps

    async def run(self, call: ToolRun, args: RememberHarderInput) -> BaseModel:
        """The record and its turns, under the same fences as recall, saying what they are."""
        context = call.context
        own = context.channel.service == SELF_SERVICE
        try:
            found = await remember_harder(
                self._deps.db,
                agent=context.agent,
                record_id=args.memory_id,
                limit=args.limit,
                channel=None if own else context.channel,
                participants=context.participants,
            )
        except (RememberHarderError, InvalidIdError) as err:
            raise ToolError(str(err)) from None
        conversation = found.record.conversation_id
        async with self._deps.db.session() as session:
            imported = await imported_conversations(
                session, conversation_ids=[conversation] if conversation else []
            )
        source = (IMPORTED if imported else DIALOG).source
        return RememberedDialog(**dict(found), source=source)


class DrillDownInput(ToolInput):
    """Input of ``drill_down``."""

    memory_id: str = Field(description="The ID shown beside a recollection in your context.")
    to_level: int | None = Field(
        default=None,
        ge=1,
        le=8,
        description="The level to reach: 1 for the memories of dialog (default: one level down).",
    )
    limit: int = Field(default=20, ge=1, le=100, description="Most memories to read.")


class DrilledDown(RememberHarderResult):
    """Drill down's result as the model reads it: what it is, then the memories beneath."""

    provenance: str = f"{MEMORY.origin}: {MEMORY.trust}"


class DrillDown(Tool):
    """Read the memories folded beneath a recollection."""

    name = "drill_down"
    description = (
        "A recollection folds many memories into one and blurs their details. Read the "
        "memories beneath it, by its ID, when a detail matters: one level down, or to level 1."
    )
    input_model = DrillDownInput

    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps

    async def run(self, call: ToolRun, args: DrillDownInput) -> BaseModel:
        """The recollection and the memories beneath it, under the same fences as recall."""
        context = call.context
        own = context.channel.service == SELF_SERVICE
        try:
            found = await drill_down(
                self._deps.db,
                agent=context.agent,
                record_id=args.memory_id,
                to_level=args.to_level,
                limit=args.limit,
                channel=None if own else context.channel,
                participants=context.participants,
            )
        except (RememberHarderError, InvalidIdError) as err:
            raise ToolError(str(err)) from None
        return DrilledDown(**dict(found))


class GoalOutcomes:
    """Remembers what came of a goal: a first-person memory on the current channel."""

    IMPORTANCE = {GoalStatus.ACHIEVED: 6, GoalStatus.ABANDONED: 5, GoalStatus.RETIRED: 5}

    def __init__(self, deps: ToolDeps, encoder: Encoder | None) -> None:
        self._deps = deps
        self._encoder = encoder

    def summary(self, goal: GoalPublic) -> str:
        """The memory's text, in the agent's own voice."""
        note = f" {goal.note}" if goal.note else ""
        if goal.status is GoalStatus.ACHIEVED:
            return f'I achieved my goal "{goal.description}".{note}'
        if goal.status is GoalStatus.ABANDONED:
            return f'I gave up on my goal "{goal.description}".{note}'
        if goal.status is GoalStatus.RETIRED:
            return f'I retired my goal "{goal.description}".{note}'
        return f'Progress on my goal "{goal.description}":{note}'

    async def __call__(self, call: ToolRun, goal: GoalPublic, before: GoalStatus) -> None:
        """Store the memory; a failure is logged, never the goal update's undoing."""
        context = call.context
        text = self.summary(goal)
        vector: list[float] | None = None
        if self._encoder is not None:
            try:
                async with asyncio.timeout(5):
                    vector = (await self._encoder.encode([text]))[0]
            except Exception:  # optional: the memory is kept without a vector
                log.info("goal outcome stored without a vector", exc_info=True)
        try:
            async with self._deps.db.session() as session:
                channel_id = await ensure_channel(
                    session, agent=context.agent, channel=context.channel, seen_at=call.now
                )
                await insert_record(
                    session,
                    record=NewRecord(
                        id=new_ulid(),
                        agent=context.agent,
                        channel_id=channel_id,
                        conversation_id=context.conversation_id,
                        summary=text,
                        importance=self.IMPORTANCE.get(goal.status, 4),
                        created_at=call.now,
                        tags=["goal", goal.status.value],
                        sensitivity=Sensitivity.PRIVATE.value,
                        participants=list(
                            dict.fromkeys([context.person_id, *context.participants])
                        ),
                        embedding=vector,
                        embed_model=self._encoder.name
                        if vector is not None and self._encoder
                        else None,
                    ),
                )
                await session.commit()
        except Exception:
            log.warning("goal outcome not remembered", exc_info=True)


def memory_tools(deps: ToolDeps, encoder: Encoder | None) -> list[Tool]:
    """The memory tools."""
    return [SearchMemory(deps, encoder), RememberHarder(deps), DrillDown(deps)]
