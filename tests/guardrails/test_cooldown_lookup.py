"""The cooldowns in force are found in one statement, the first key asked winning."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from store.queries.guardrails import active_cooldown
from store.tables.guardrails import GuardrailCooldownRow
from tests.harness import Harness

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


async def test_the_first_key_in_force_wins_and_a_lapsed_one_does_not_count(
    harness: Harness,
) -> None:
    agent = (await harness.create_agent()).handle
    person, channel, other = (
        ("person", "01M92Q0000000000000000000A"),
        ("channel", "c:x"),
        (
            "channel",
            "c:y",
        ),
    )
    async with harness.db.session() as session:
        for (scope, key), until, rule in (
            (person, NOW + timedelta(minutes=5), "on-person"),
            (channel, NOW + timedelta(minutes=5), "on-channel"),
            (other, NOW - timedelta(minutes=5), "lapsed"),
        ):
            session.add(
                GuardrailCooldownRow(agent=agent, scope=scope, key=key, until=until, rule_id=rule)
            )
        await session.commit()
    lane = harness.db.lane
    both = await active_cooldown(lane, agent=agent, keys=[person, channel], now=NOW)
    channel_first = await active_cooldown(lane, agent=agent, keys=[channel, person], now=NOW)
    lapsed = await active_cooldown(lane, agent=agent, keys=[other], now=NOW)
    elsewhere = await active_cooldown(lane, agent="nobody", keys=[person], now=NOW)
    none_asked = await active_cooldown(lane, agent=agent, keys=[], now=NOW)
    assert both is not None and both.rule_id == "on-person"
    assert channel_first is not None and channel_first.rule_id == "on-channel"
    assert lapsed is None and elsewhere is None and none_asked is None
