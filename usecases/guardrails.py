"""Guardrail use cases any channel can call: validate a rules file, list rules and firings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from activities.guardrails.rules import RulesError, configured_rules, load_rules
from schemas.guardrails import GuardrailRule
from schemas.settings import Settings
from store.queries.guardrails import list_firings
from usecases.store import open_store


def check_rules_file(path: Path) -> list[str]:
    """Every problem of a rules file, one ``file:line: reason`` line each (empty: valid)."""
    try:
        load_rules(path)
    except RulesError as err:
        return err.lines()
    return []


def active_rules(settings: Settings) -> list[GuardrailRule]:
    """The rules the configured file (or the shipped default set) holds.

    Raises:
        RulesError: The configured file does not load.
    """
    return list(configured_rules(settings.guardrails).rules)


@dataclass(frozen=True)
class FiringView:
    """One firing as an operator reads it."""

    firing_id: str
    agent: str
    rule_id: str
    actions: list[str]
    evidence: list[str]
    summary: str
    person_id: str | None
    channel: str | None
    conversation_id: str | None
    activation_id: str | None
    blocking: bool
    fired_at: datetime
    notified_at: datetime | None


async def firings(settings: Settings, *, agent: str | None, limit: int) -> list[FiringView]:
    """The latest guardrail firings (of one agent, or of all), oldest first."""
    async with open_store(settings, pool_size=2) as db, db.session() as session:
        rows = await list_firings(session, agent=agent, limit=limit)
    return [
        FiringView(
            firing_id=row.id,
            agent=row.agent,
            rule_id=row.rule_id,
            actions=list(row.actions),
            evidence=list(row.evidence),
            summary=row.summary,
            person_id=row.person_id,
            channel=row.channel_key,
            conversation_id=row.conversation_id,
            activation_id=row.activation_id,
            blocking=row.blocking,
            fired_at=row.fired_at,
            notified_at=row.notified_at,
        )
        for row in rows
    ]
