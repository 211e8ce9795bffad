"""Store activities: the orchestration's reads and write-throughs to PostgreSQL.

All are idempotent, so a retry after a crash or a database restart changes nothing twice.
"""

from __future__ import annotations

from temporalio import activity

from schemas.activation import RecordOutcomeInput
from schemas.records import (
    AgentLookupInput,
    AgentProfile,
    CloseConversationInput,
    Done,
    OpenConversationInput,
    RecordTurnInput,
    ResolvedSpeaker,
    ResolveSpeakerInput,
)
from store.db import Database
from store.queries.agents import get_agent
from store.queries.dialog import close_conversation, open_conversation, record_turn
from store.queries.people import known_speaker, resolve_speaker
from store.queries.runtime import record_outcome


class StoreActivities:
    """Reads and write-throughs for the agent, conversation and activation workflows."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @activity.defn(name="store.lookup_agent")
    async def lookup_agent(self, data: AgentLookupInput) -> AgentProfile:
        """The agent's name and conversation settings (``exists=False`` if unknown)."""
        async with self._db.autocommit() as session:
            agent = await get_agent(session, handle=data.handle)
        if agent is None:
            return AgentProfile(
                handle=data.handle,
                name=data.handle,
                idle_minutes=30,
                deliberation="off",
                exists=False,
            )
        return AgentProfile(
            handle=agent.handle,
            name=agent.name,
            idle_minutes=agent.config.idle_minutes,
            deliberation=agent.config.deliberation.value,
        )

    @activity.defn(name="store.resolve_speaker")
    async def resolve_speaker(self, data: ResolveSpeakerInput) -> ResolvedSpeaker:
        """The person behind a speaker, created on first contact."""
        # A known speaker (nearly every message) is one statement, on the driver lane.
        known = await known_speaker(
            self._db.lane.rows,
            agent=data.agent,
            channel=data.channel,
            speaker=data.speaker,
            seen_at=data.seen_at,
        )
        if known is not None:
            return known
        # First contact creates the person and identity together, so it needs a transaction.
        async with self._db.session() as session:
            return await resolve_speaker(
                session,
                agent=data.agent,
                channel=data.channel,
                speaker=data.speaker,
                seen_at=data.seen_at,
            )

    @activity.defn(name="store.open_conversation")
    async def open_conversation(self, data: OpenConversationInput) -> Done:
        """Record the conversation as open."""
        async with self._db.session() as session:
            await open_conversation(
                session,
                conversation_id=data.conversation_id,
                agent=data.agent,
                channel=data.channel,
                opened_at=data.opened_at,
            )
        return Done()

    @activity.defn(name="store.record_turn")
    async def record_turn(self, data: RecordTurnInput) -> Done:
        """Write one verbatim turn through to PostgreSQL."""
        # One statement (the turn and its conversation's count), atomic without a transaction.
        async with self._db.autocommit() as session:
            await record_turn(session, agent=data.agent, channel=data.channel, turn=data.turn)
        return Done()

    @activity.defn(name="store.close_conversation")
    async def close_conversation(self, data: CloseConversationInput) -> Done:
        """Record the conversation as closed."""
        async with self._db.session() as session:
            await close_conversation(
                session,
                conversation_id=data.conversation_id,
                closed_at=data.closed_at,
                reason=data.reason,
            )
        return Done()

    @activity.defn(name="store.record_outcome")
    async def record_outcome(self, data: RecordOutcomeInput) -> Done:
        """Persist the activation's outcome and completion marker."""
        async with self._db.autocommit() as session:
            await record_outcome(
                session, agent=data.agent, trigger=data.trigger, marker=data.marker
            )
        return Done()
