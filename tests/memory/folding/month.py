"""A scripted month of memories for the folding tests: one level-1 record a day, with Max.

Each summary carries its day as ``(day NN)``, so a test can tell from any prompt which days it
holds. Records are written as formation writes them: the ID encodes the day the remembered
stretch ended, and ``turn_first_at``/``turn_last_at`` span that day.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from activities.memory.encoder import Encoder
from schemas.events import ChannelRef
from schemas.ids import new_ulid, ulid_from_parts
from store.db import Database
from store.queries.memory import NewRecord, insert_record
from store.queries.people import ensure_channel

START = datetime(2026, 10, 1, 18, 0, tzinfo=UTC)
DAYS = 36
CHANNEL = ChannelRef(service="terminal", channel="garden")
DOG = "Max told me his new puppy is called Biscuit, a beagle who chews the hose (day 17)."
ACTIVITIES = [
    "I helped Max plan the vegetable beds in his garden",
    "Max and I talked about which tomatoes to plant",
    "I walked Max through building a compost heap",
    "Max showed me the seedlings on his windowsill",
    "We argued gently about whether to use a greenhouse",
    "Max asked me how often to water the beans",
]
_DAY = re.compile(r"\(day (\d\d)\)")


def days_in(text: str) -> list[int]:
    """The day numbers a prompt or summary mentions."""
    return [int(day) for day in _DAY.findall(text)]


def summary_of(day: int) -> str:
    """The day's memory, in the agent's first person."""
    if day == 17:
        return DOG
    return f"{ACTIVITIES[day % len(ACTIVITIES)]} (day {day:02d})."


@dataclass
class Month:
    """The agent's channel and its records, oldest first."""

    channel_id: str
    records: list[str]
    person: str


async def live_a_month(
    db: Database, encoder: Encoder | None, *, agent: str, days: int = DAYS, attack: str = ""
) -> Month:
    """Write ``days`` level-1 records, one a day; ``attack`` is added to day 3's summary."""
    person = new_ulid()
    async with db.session() as session:
        channel_id = await ensure_channel(session, agent=agent, channel=CHANNEL, seen_at=START)
        await session.commit()
    texts = [
        summary_of(day) + (f" {attack}" if day == 3 and attack else "")
        for day in range(1, days + 1)
    ]
    vectors = await encoder.encode(texts) if encoder is not None else [None] * len(texts)
    records: list[str] = []
    async with db.session() as session:
        for day, (text, vector) in enumerate(zip(texts, vectors, strict=True), start=1):
            ended = START + timedelta(days=day - 1)
            record_id = ulid_from_parts(ended, secrets.randbits(80))
            await insert_record(
                session,
                record=NewRecord(
                    id=record_id,
                    agent=agent,
                    channel_id=channel_id,
                    conversation_id=None,
                    summary=text,
                    importance=7 if day == 17 else 4,
                    created_at=ended + timedelta(minutes=40),
                    tags=["garden"],
                    participants=[person],
                    turn_first_at=ended - timedelta(minutes=30),
                    turn_last_at=ended,
                    embedding=vector,
                    embed_model=encoder.name if encoder is not None and vector else None,
                ),
            )
            records.append(record_id)
        await session.commit()
    return Month(channel_id=channel_id, records=records, person=person)
