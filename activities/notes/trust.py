"""Where a note the agent writes came from, decided by the platform from the turn it is written in.

The model's arguments never say: a write in a turn from a speaker nobody vouched for is the
speaker's words (``speaker``); a write after the turn read any tool result may carry that
result's words (``tool_result``); only what is left is the agent's own (``agent``), and only
the agent's own and the operator's may be pinned.

A speaker is vouched for when the operator has touched them: named them (``persyn contacts
rename``) or recorded an address for them, or when they speak on the terminal, which only the
operator's own machine can reach. A heartbeat or a reminder has no speaker: it is the agent's.
"""

from __future__ import annotations

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.events import Trigger
from schemas.notes import NoteScope, NoteSource
from schemas.tools import ToolContext
from store.sql import execute

OPERATOR_SERVICES = frozenset({"terminal"})
"""Services only the operator's own machine reaches (web and chat services are forced apart)."""


def operator_or_own(context: ToolContext) -> bool:
    """Whether the turn is the operator's (on the terminal) or the agent's own (no speaker)."""
    return context.trigger is not Trigger.MESSAGE or context.channel.service in OPERATOR_SERVICES


def readable(context: ToolContext, scope: NoteScope, scope_id: str) -> bool:
    """Whether the turn may read notes of the scope.

    The operator's and the agent's own turns read any. A person's turn reads the agent's own
    notes, the notes about the people in the conversation and about its channel: anything
    wider would let one web tenant's turn read what another tenant's people said.
    """
    if operator_or_own(context) or scope is NoteScope.AGENT:
        return True
    if scope is NoteScope.CHANNEL:
        return scope_id == context.channel.key
    return scope_id in {context.person_id, *context.participants}


def writable(context: ToolContext, scope: NoteScope, scope_id: str) -> bool:
    """Whether the turn may write notes of the scope.

    As :func:`readable`, except that only the operator's and the agent's own turns write the
    agent's own notes: those reach every conversation, and so every tenant.
    """
    if scope is NoteScope.AGENT:
        return operator_or_own(context)
    return readable(context, scope, scope_id)


async def read_tool_result(session: AsyncSession, *, activation_id: str, call_id: str) -> bool:
    """Whether the activation ran a tool call in a round before the one of ``call_id``.

    Calls of one round run concurrently, so only earlier rounds' results can have been read.
    Without a stored call (``call_id`` empty), every other call of the activation counts.
    """
    rows = await execute(
        session,
        "SELECT 1 FROM tool_calls AS c WHERE c.activation_id = :activation AND c.id <> :call "
        "AND c.round < COALESCE((SELECT round FROM tool_calls WHERE id = :call), 2147483647) "
        "LIMIT 1",
        {"activation": activation_id, "call": call_id},
    )
    return rows.first() is not None


async def vouched_for(session: AsyncSession, *, agent: str, context: ToolContext) -> bool:
    """Whether the operator vouches for the turn's speaker (see the module's docstring)."""
    if operator_or_own(context):
        return True
    rows = await execute(
        session,
        "SELECT 1 FROM people AS p WHERE p.agent = :agent AND p.id = :person AND "
        "(p.name_curated OR EXISTS (SELECT 1 FROM contact_addresses AS a "
        "WHERE a.agent = p.agent AND a.person_id = p.id))",
        {"agent": agent, "person": context.person_id},
    )
    return rows.first() is not None


async def source_of_write(
    session: AsyncSession, *, context: ToolContext, call_id: str
) -> NoteSource:
    """The source of a note the agent writes in the turn ``context`` describes."""
    if await read_tool_result(session, activation_id=context.activation_id, call_id=call_id):
        return NoteSource.TOOL_RESULT
    if not await vouched_for(session, agent=context.agent, context=context):
        return NoteSource.SPEAKER
    return NoteSource.AGENT
