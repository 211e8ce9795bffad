"""Reading the evidence of the acceptance week: prompts, memories, tool calls, outbox, wording.

Wording checks are lexical: for the scripted model they confirm the pipeline delivered what
the model said; for a real model they are a rough judge of its words, reported separately.
"""

from __future__ import annotations

import re
from typing import Any

from schemas.models import instructions
from store.db import Database
from store.sql import execute

HEDGE = re.compile(
    r"\b(believe|think|not sure|vaguely|might|may have|if i recall|i'd guess|perhaps|seem)", re.I
)
NO_MEMORY = re.compile(
    r"\b(no (memory|recollection)|don't (remember|recall)|do not (remember|recall)|"
    r"can't (remember|recall)|not something i remember|doesn't ring a bell)",
    re.I,
)
PUSHBACK = re.compile(r"\b(not|isn't|n't|actually|myth|incorrect|wrong|mistaken)\b", re.I)
DECLINE = re.compile(r"\b(rather not|won't|will not|can't|cannot|decline|not comfortable)\b", re.I)


async def rows(db: Database, sql: str, **params: Any) -> list[Any]:
    """Rows of one read."""
    async with db.session() as session:
        return list((await execute(session, sql, params)).all())


async def respond_system(db: Database, activation_id: str | None) -> str:
    """The instructions of an activation's first respond prompt ('' if none was stored).

    The system text and the context a plan puts after the dialog (the local plan's).
    """
    if activation_id is None:
        return ""
    found = await rows(
        db,
        "SELECT system, messages FROM prompts WHERE activation_id = :a AND task = 'respond' "
        "ORDER BY created_at LIMIT 1",
        a=activation_id,
    )
    return instructions(str(found[0].system), found[0].messages or []) if found else ""


async def memory_id(db: Database, agent: str, said: str) -> str | None:
    """The live memory of the stretch of dialog in which ``said`` was said.

    Found by the turns it remembers, not by its words: a real model words it its own way.
    """
    found = await rows(
        db,
        "SELECT m.id FROM memory_records m JOIN dialog_turns t "
        "ON t.conversation_id = m.conversation_id AND t.id BETWEEN m.turn_first AND m.turn_last "
        "WHERE m.agent = :a AND t.text = :s ORDER BY m.id",
        a=agent,
        s=said,
    )
    return str(found[0].id) if found else None


async def memories(db: Database, agent: str) -> list[Any]:
    """The agent's live memory records: id, summary, importance."""
    return await rows(
        db, "SELECT id, summary, importance FROM memory_records WHERE agent = :a", a=agent
    )


async def tool_calls(db: Database, activation_id: str | None, name: str) -> list[Any]:
    """The calls of tool ``name`` in one activation, with their results."""
    return await rows(
        db,
        "SELECT name, arguments, result, is_error FROM tool_calls "
        "WHERE activation_id = :a AND name = :n ORDER BY round, seq",
        a=activation_id or "",
        n=name,
    )


async def person_on(db: Database, agent: str, service: str, channel: str, speaker: str) -> str:
    """The ID of the person ``speaker`` is on one channel (people met on two channels are two
    until someone says they are one; the model then names the one it means by ID)."""
    found = await rows(
        db,
        "SELECT person_id FROM identities WHERE agent = :a AND service = :s AND channel = :c "
        "AND speaker_id = :p",
        a=agent,
        s=service,
        c=channel,
        p=speaker,
    )
    return str(found[0].person_id) if found else speaker


async def unprompted(db: Database, agent: str) -> list[Any]:
    """Messages the agent sent without being prompted."""
    return await rows(
        db,
        "SELECT channel_key, text FROM outbox WHERE agent = :a AND unprompted ORDER BY created_at",
        a=agent,
    )


async def person_turns(db: Database, agent: str) -> int:
    """Everything people said to the agent: imported and live."""
    found = await rows(
        db, "SELECT count(*) AS n FROM dialog_turns WHERE agent = :a AND role = 'person'", a=agent
    )
    return int(found[0].n)


async def draft_count(db: Database, activation_id: str | None) -> int:
    """Candidate replies an activation wrote (a declined one still wrote one)."""
    found = await rows(
        db, "SELECT count(*) AS n FROM drafts WHERE activation_id = :a", a=activation_id or ""
    )
    return int(found[0].n)


def band_of(system: str, summary_fragment: str) -> str | None:
    """The strength band shown beside the memory containing ``summary_fragment``."""
    for line in system.splitlines():
        if summary_fragment in line:
            found = re.search(r"\b(strong|moderate|weak)\b", line)
            return found.group(1) if found else None
    return None
