"""The context source's one-statement read gives what two reads of the trajectory give."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from schemas.emotion import EmotionReadingPublic
from schemas.ids import new_ulid
from schemas.memory import Emotion
from store.queries.emotion import (
    insert_reading,
    keep_reading,
    latest_here_and_anywhere,
    latest_readings,
    reading_for,
)
from tests.harness import Harness

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_the_joined_read_matches_the_two_reads_it_replaces(
    harness: Harness, seed: int
) -> None:
    agent = await harness.create_agent()
    draw = random.Random(seed)
    here, elsewhere = new_ulid(), new_ulid()
    async with harness.db.autocommit() as session:
        for _ in range(draw.randint(0, 14)):
            emotion = draw.choice(list(Emotion))
            await insert_reading(
                session,
                reading=EmotionReadingPublic(
                    id=new_ulid(),
                    agent=agent.handle,
                    conversation_id=draw.choice([here, elsewhere]),
                    channel_key="terminal:local",
                    activation_id=new_ulid(),
                    # Few distinct minutes: ties on the time are ordered by ID, in both reads.
                    at=START + timedelta(minutes=draw.randint(0, 5)),
                    top=emotion,
                    probability=1.0,
                    distribution={emotion: 1.0},
                ),
            )
        for limit in (1, 3, 8):
            for until in (START + timedelta(minutes=2), START + timedelta(hours=1)):
                anywhere, in_here = await latest_here_and_anywhere(
                    harness.db.lane,
                    agent=agent.handle,
                    conversation_id=here,
                    limit=limit,
                    until=until,
                )
                assert anywhere == await latest_readings(
                    harness.db.lane, agent=agent.handle, limit=limit, until=until
                )
                assert in_here == await latest_readings(
                    harness.db.lane,
                    agent=agent.handle,
                    limit=limit,
                    until=until,
                    conversation_id=here,
                )


def _reading(agent: str, activation: str, at: datetime, emotion: Emotion) -> EmotionReadingPublic:
    return EmotionReadingPublic(
        id=new_ulid(),
        agent=agent,
        conversation_id=new_ulid(),
        channel_key="terminal:local",
        activation_id=activation,
        at=at,
        top=emotion,
        probability=0.75,
        distribution={emotion: 0.75, Emotion.NEUTRAL: 0.25},
    )


async def test_a_reading_is_kept_once_per_activation_and_faded_ones_go(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    other = (await harness.create_agent()).handle
    old = _reading(agent, new_ulid(), START - timedelta(days=30), Emotion.AMUSED)
    elsewhere = _reading(other, new_ulid(), START - timedelta(days=30), Emotion.AMUSED)
    async with harness.db.autocommit() as session:
        for reading in (old, elsewhere):
            await insert_reading(session, reading=reading)
    activation = new_ulid()
    first = _reading(agent, activation, START, Emotion.FRUSTRATED)
    cutoff = START - timedelta(days=7)
    assert await keep_reading(harness.db.lane, reading=first, prune_before=cutoff)
    # A retry of the same activation stores nothing twice, whatever it read the second time.
    retry = _reading(agent, activation, START, Emotion.ANXIOUS)
    assert not await keep_reading(harness.db.lane, reading=retry, prune_before=cutoff)
    assert await reading_for(harness.db.lane, activation_id=activation) == first
    # The agent's faded reading went; another agent's did not.
    assert await latest_readings(harness.db.lane, agent=agent, limit=10) == [first]
    assert await latest_readings(harness.db.lane, agent=other, limit=10) == [elsewhere]
