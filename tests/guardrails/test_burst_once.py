"""A burst is reported once: the messages after a burst fired, within its window, are that burst.

Before, every message past a burst's threshold fired the rule again: each started a guardrail
run and notified the supervisor, so a flood of a hundred messages paged them eighty times.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from temporalio.client import Client

from schemas.ids import new_ulid
from store.queries.guardrails import fired_recently, list_firings
from store.tables.guardrails import GuardrailFiringRow
from tests.guardrails.helpers import (
    fired_on,
    guarded_worker,
    guardrail_result,
    rules_file,
)
from tests.harness import Stack

BURST = rules_file(
    """\
  - id: burst
    pattern: {kind: message_burst, per: person, messages: 3, window_seconds: 3600}
    actions: [notify]
"""
)


async def test_a_burst_fires_once_and_its_later_messages_are_the_same_burst(
    client: Client, stack: Stack
) -> None:
    async with guarded_worker(client, stack, rules_yaml=BURST) as harness:
        agent = (await harness.create_agent()).handle
        receipts = [await harness.say(agent, f"message {i}") for i in range(5)]
        assert [await fired_on(harness, r) for r in receipts[:2]] == [[], []]
        third = receipts[2].marker
        assert third is not None and third.activation_id is not None
        assert (await guardrail_result(harness, third.activation_id)).fired == ["burst"]
        # The fourth and fifth are in the same hour: the same burst, not reported again.
        assert [await fired_on(harness, r) for r in receipts[3:]] == [[], []]
        async with harness.db.session() as session:
            rows = await list_firings(session, agent=agent, limit=10)
        assert [(r.rule_id, r.activation_id) for r in rows] == [("burst", third.activation_id)]


async def test_a_firing_stands_for_its_window_and_scope_only(stack: Stack, client: Client) -> None:
    async with guarded_worker(client, stack) as harness:
        agent = (await harness.create_agent()).handle
        at = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
        fired = GuardrailFiringRow(
            id=new_ulid(),
            agent=agent,
            rule_id="burst",
            summary="3 messages per person in 60 s",
            person_id=new_ulid(),
            channel_key="terminal:tty",
            activation_id=new_ulid(),
            fired_at=at,
        )
        async with harness.db.session() as session:
            session.add(fired)
            await session.commit()

        async def asked(**change: object) -> bool:
            query: dict[str, object] = {
                "agent": agent,
                "rule_id": "burst",
                "person_id": fired.person_id,
                "channel_key": "terminal:tty",
                "since": at - timedelta(seconds=30),
                "until": at + timedelta(seconds=30),
                "other_than": new_ulid(),
            }
            async with harness.db.session() as session:
                return await fired_recently(session, **{**query, **change})  # type: ignore[arg-type]

        assert await asked()
        assert not await asked(since=at + timedelta(seconds=1))  # the window has passed
        assert not await asked(until=at - timedelta(seconds=1))  # not yet fired then
        assert not await asked(person_id=new_ulid())  # someone else's burst
        assert not await asked(rule_id="other")
        assert not await asked(other_than=fired.activation_id)  # its own exchange, retried
        assert await asked(person_id=None)  # per channel: the same channel
        assert not await asked(person_id=None, channel_key="terminal:other")
