"""Erasure: take forgotten or expired content out of every table that keeps a copy of it.

A memory's summary and a conversation's words are copied on their way through the pipeline:
into stored prompts (recall, dialog), tool-loop messages and results, completion markers, the
outbox, activation outcomes, parked deliberation and formation drafts. Forgetting a memory
redacts its text wherever it was copied; retention deletes (or empties) the rows that hold an
agent's dialog from before the cutoff. Audit entries keep who, when and why, never the text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel.ext.asyncio.session import AsyncSession

from store.sql import execute, rowcount

REDACTED = "[forgotten]"
"""What a forgotten text becomes where it was copied into a larger text."""

MIN_REDACT_CHARS = 12
"""Shorter texts are not redacted by search: a word that short would match unrelated text."""

TEXT_COPIES: tuple[tuple[str, str], ...] = (
    ("prompts", "system"),
    ("drafts", "text"),
    ("tool_calls", "raw_arguments"),
    ("tool_calls", "result"),
    ("autonomy_log", "assessment"),
    ("parked_conclusions", "candidate"),
    ("parked_conclusions", "refined"),
    ("memory_formations", "summary"),
    ("activations", "text"),
    ("completion_markers", "text"),
    ("outbox", "text"),
    ("residue_items", "text"),
    ("tool_approvals", "arguments"),
)
"""Text columns that may hold a copy of a memory's summary (table, column)."""

JSON_COPIES: tuple[tuple[str, str], ...] = (
    ("prompts", "messages"),
    ("prompts", "extra"),
    ("prompt_extensions", "message"),
    ("tool_calls", "arguments"),
    ("parked_conclusions", "objections"),
)
"""JSONB columns that may hold a copy of a memory's summary (table, column)."""


def variants(text: str) -> list[str]:
    """The forms a text takes when copied: as is, and with its whitespace collapsed."""
    forms = [text, " ".join(text.split())]
    return [f for i, f in enumerate(forms) if f and f not in forms[:i]]


def json_escaped(text: str) -> str:
    """``text`` as it appears inside a JSON string (PostgreSQL's ``jsonb::text`` form)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


async def redact(session: AsyncSession, *, texts: Sequence[str], mark: str = REDACTED) -> int:
    """Replace every copy of each of ``texts`` with ``mark``; returns the cells changed.

    Does not commit. Texts shorter than :data:`MIN_REDACT_CHARS` are skipped.
    """
    changed = 0
    for text in texts:
        for form in variants(text):
            if len(form) < MIN_REDACT_CHARS:
                continue
            for table, column in TEXT_COPIES:
                result = await execute(
                    session,
                    f"UPDATE {table} SET {column} = replace({column}, :t, :m) "
                    f"WHERE strpos({column}, :t) > 0",
                    {"t": form, "m": mark},
                )
                changed += int(result.rowcount or 0)
            escaped, escaped_mark = json_escaped(form), json_escaped(mark)
            for table, column in JSON_COPIES:
                result = await execute(
                    session,
                    f"UPDATE {table} SET {column} = "
                    f"CAST(replace(CAST({column} AS text), :t, :m) AS jsonb) "
                    f"WHERE strpos(CAST({column} AS text), :t) > 0",
                    {"t": escaped, "m": escaped_mark},
                )
                changed += int(result.rowcount or 0)
    return changed


async def erase_memory_text(session: AsyncSession, *, record_id: str, summary: str) -> int:
    """Empty a withdrawn record's summary, its draft and audit text, and redact its copies.

    Does not commit: the caller withdraws the record in the same transaction.
    """
    await execute(
        session, "UPDATE memory_records SET summary = '' WHERE id = :id", {"id": record_id}
    )
    await execute(
        session,
        "UPDATE memory_formations SET summary = NULL WHERE record_id = :id",
        {"id": record_id},
    )
    await execute(
        session, "UPDATE memory_audit SET summary = NULL WHERE record_id = :id", {"id": record_id}
    )
    return await redact(session, texts=[summary]) if summary else 0


@dataclass
class DialogErasure:
    """What dropping an agent's dialog before a cutoff removed, table by table."""

    dialog_turns: int = 0
    prompts: int = 0
    outbox: int = 0
    markers: int = 0
    activations: int = 0
    tool_calls: int = 0
    parked: int = 0
    drafts: int = 0


_OWN_ACTIVATIONS = (
    "SELECT id FROM activations WHERE agent = :a "
    "UNION SELECT activation_id FROM outbox WHERE agent = :a "
    "UNION SELECT activation_id FROM tool_calls WHERE agent = :a "
    "UNION SELECT activation_id FROM speak_decisions WHERE agent = :a"
)
"""The agent's activations, from every table that names the agent beside one (prompts do not)."""


async def erase_dialog(session: AsyncSession, *, agent: str, before: datetime) -> DialogErasure:
    """Remove the agent's dialog said before ``before`` and every copy of it; commits.

    Turns are deleted; so are the prompts assembled from them (with their tool-loop messages),
    the reply drafts, outbox rows and completion markers of that time, and parked
    deliberation. Activation outcomes and tool calls stay as metadata, their text emptied.
    """
    p = {"a": agent, "before": before}
    done = DialogErasure()
    prompts = (
        "SELECT id FROM prompts WHERE created_at < :before "
        f"AND activation_id IN ({_OWN_ACTIVATIONS})"
    )
    await execute(session, f"DELETE FROM prompt_extensions WHERE prompt_id IN ({prompts})", p)
    done.prompts = await rowcount(session, f"DELETE FROM prompts WHERE id IN ({prompts})", p)
    done.dialog_turns = await rowcount(
        session, "DELETE FROM dialog_turns WHERE agent = :a AND at < :before", p
    )
    done.outbox = await rowcount(
        session, "DELETE FROM outbox WHERE agent = :a AND created_at < :before", p
    )
    done.markers = await rowcount(
        session, "DELETE FROM completion_markers WHERE agent = :a AND completed_at < :before", p
    )
    done.activations = await rowcount(
        session,
        "UPDATE activations SET text = NULL "
        "WHERE agent = :a AND completed_at < :before AND text IS NOT NULL",
        p,
    )
    done.tool_calls = await rowcount(
        session,
        "UPDATE tool_calls SET arguments = '{}'::jsonb, raw_arguments = NULL, result = NULL "
        "WHERE agent = :a AND created_at < :before "
        "AND (arguments <> '{}'::jsonb OR raw_arguments IS NOT NULL OR result IS NOT NULL)",
        p,
    )
    done.parked = await rowcount(
        session, "DELETE FROM parked_conclusions WHERE agent = :a AND created_at < :before", p
    )
    done.drafts = await rowcount(
        session, "DELETE FROM drafts WHERE agent = :a AND created_at < :before", p
    )
    await session.commit()
    return done


async def open_conversations(session: AsyncSession, *, agent: str) -> list[str]:
    """IDs of the agent's conversations still open (their workflows hold a window)."""
    result = await execute(
        session,
        "SELECT id FROM conversations WHERE agent = :a AND status = 'open' ORDER BY id",
        {"a": agent},
    )
    return [str(r.id) for r in result]


async def memory_text(session: AsyncSession, *, record_id: str) -> str | None:
    """What a record says now (empty once forgotten), to redact it outside the database."""
    result = await execute(
        session, "SELECT summary FROM memory_records WHERE id = :id", {"id": record_id}
    )
    value = result.scalar_one_or_none()
    return str(value) if value else None
