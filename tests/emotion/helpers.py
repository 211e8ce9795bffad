"""A worker with the emotion classifier on, and scripted distributions for it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlmodel import col, select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.emotion import EmotionReadingPublic
from schemas.memory import Emotion
from store.db import Database
from store.queries.emotion import latest_readings
from store.tables.deliberation import SpeakDecisionRow
from tests.harness import Harness, Stack, running_worker

OFF = {"channels": {"terminal": "off"}}
"""No critique: these tests are about the decide step and the state, not the critics."""


def feels(**probabilities: float) -> str:
    """A classifier answer giving these probabilities (the rest zero)."""
    return json.dumps({"emotions": {e.value: probabilities.get(e.value, 0.0) for e in Emotion}})


def classifier(*answers: str, then: str | None = None) -> list[ScriptRule]:
    """Rules answering the emotion classifier with ``answers`` in turn, then ``then``."""
    rules = [ScriptRule(task="emotion", reply=a, times=1) for a in answers]
    return rules + ([ScriptRule(task="emotion", reply=then)] if then is not None else [])


def optional(match: str, *, is_optional: bool) -> ScriptRule:
    """Answer the optional-request judgment for a message matching ``match``."""
    return ScriptRule(
        task="decide",
        system_match="Someone has just asked something of you",
        match=match,
        reply=json.dumps({"optional": is_optional}),
    )


@asynccontextmanager
async def emotion_worker(
    client: Client, stack: Stack, rules: list[ScriptRule], **emotion: Any
) -> AsyncIterator[Harness]:
    """A worker whose classifier is on (the suite's default is off) and critique off."""
    overrides: dict[str, object] = {"emotion": {"enabled": True, **emotion}, "deliberation": OFF}
    async with running_worker(client, stack, rules=rules, settings_overrides=overrides) as h:
        yield h


async def readings(db: Database, agent: str) -> list[EmotionReadingPublic]:
    return await latest_readings(db.lane, agent=agent, limit=50)


async def decision(db: Database, activation_id: str) -> SpeakDecisionRow:
    async with db.session() as session:
        row = (
            await session.exec(
                select(SpeakDecisionRow).where(col(SpeakDecisionRow.activation_id) == activation_id)
            )
        ).first()
    assert row is not None, f"no decision recorded for {activation_id}"
    return row
