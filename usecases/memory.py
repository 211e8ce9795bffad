"""An agent's memories from the operator's side: read, forget, override, cull.

Forgetting withdraws a record from recall and leaves an audit entry; it never cascades. Culling is
what the maintenance schedule does every hour, run now. Overriding a record's sensitivity is
audited the same way and applies to recall at once.
"""

from __future__ import annotations

from datetime import UTC, datetime

from activities.memory.forgetting import forget_memory
from activities.memory.retention import run_cull
from schemas.memory import MemoryRecordPublic, Sensitivity
from schemas.memory_formation import (
    CullInput,
    CullResult,
    ForgetResult,
    MemoryDetail,
    SensitivityChange,
)
from schemas.settings import Settings
from store.db import Database
from store.queries import memory as records
from store.queries.memory_sensitivity import ForgottenRecordError, set_sensitivity
from usecases.errors import NotTheAgentsError, UnknownAgentError, UseCaseError
from usecases.store import open_store


async def _check_agent(db: Database, agent: str) -> None:
    async with db.session() as session:
        if not await records.agent_exists(session, agent=agent):
            raise UnknownAgentError(agent)


async def _owned_detail(db: Database, record_id: str, agent: str | None) -> MemoryDetail | None:
    if agent is not None:
        await _check_agent(db, agent)
    async with db.session() as session:
        found = await records.detail(session, record_id=record_id)
    if found is not None and agent is not None and found.record.agent != agent:
        raise NotTheAgentsError(what="memory", plural="memories", record_id=record_id, agent=agent)
    return found


async def list_memories(
    *, settings: Settings, agent: str, channel: str | None, limit: int, include_forgotten: bool
) -> list[tuple[MemoryRecordPublic, str]]:
    """An agent's memories, newest first, each with its channel key.

    Raises:
        UnknownAgentError: no such agent.
    """
    async with open_store(settings) as db:
        await _check_agent(db, agent)
        async with db.session() as session:
            return await records.list_records(
                session,
                agent=agent,
                channel_key=channel,
                limit=limit,
                include_forgotten=include_forgotten,
            )


async def memory_detail(
    *, settings: Settings, record_id: str, agent: str | None = None
) -> MemoryDetail | None:
    """One memory with its provenance and audit trail, or None if there is no such record.

    Raises:
        UnknownAgentError: ``agent`` names no agent.
        NotTheAgentsError: the memory is not ``agent``'s.
    """
    async with open_store(settings) as db:
        return await _owned_detail(db, record_id, agent)


async def forget(
    *, settings: Settings, record_id: str, agent: str | None, actor: str, reason: str | None
) -> ForgetResult | None:
    """Withdraw a memory from recall and erase its text; None if there is no such record.

    Raises:
        UnknownAgentError: ``agent`` names no agent.
        NotTheAgentsError: the memory is not ``agent``'s (nothing is forgotten).
    """
    async with open_store(settings) as db:
        # Checked before anything changes: naming the wrong agent must forget nothing.
        if agent is not None and await _owned_detail(db, record_id, agent) is None:
            return None
        return await forget_memory(
            db,
            record_id=record_id,
            actor=actor,
            reason=reason,
            now=datetime.now(UTC),
            span_file=settings.span_file,
        )


class ForgottenMemoryError(UseCaseError):
    """A forgotten memory's sensitivity cannot be changed: it is out of recall already."""

    def __init__(self, record_id: str) -> None:
        super().__init__(f"memory {record_id} is forgotten: it is out of recall already")
        self.record_id = record_id


async def change_sensitivity(
    *,
    settings: Settings,
    record_id: str,
    sensitivity: Sensitivity,
    agent: str | None,
    actor: str,
    reason: str,
) -> SensitivityChange | None:
    """Override who may hear a memory again, audited; None if there is no such record.

    Recall reads the record's sensitivity on every prompt, so the change applies at once.

    Raises:
        UnknownAgentError: ``agent`` names no agent.
        NotTheAgentsError: the memory is not ``agent``'s (nothing changes).
        ForgottenMemoryError: the memory was forgotten.
    """
    async with open_store(settings) as db:
        if agent is not None and await _owned_detail(db, record_id, agent) is None:
            return None
        try:
            async with db.session() as session:
                return await set_sensitivity(
                    session,
                    record_id=record_id,
                    sensitivity=sensitivity,
                    actor=actor,
                    reason=reason,
                    now=datetime.now(UTC),
                )
        except ForgottenRecordError:
            raise ForgottenMemoryError(record_id) from None


async def cull(*, settings: Settings, agent: str, dry_run: bool, actor: str) -> CullResult:
    """Delete (or with ``dry_run`` list) memories rated too low for too long.

    Raises:
        UnknownAgentError: no such agent.
    """
    async with open_store(settings) as db:
        await _check_agent(db, agent)
        data = CullInput(
            agent=agent, now=datetime.now(UTC), dry_run=dry_run, actor=actor, show=100_000
        )
        return await run_cull(db, settings.memory, data)
