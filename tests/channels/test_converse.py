"""Two agents converse through the ordinary pipeline and stop on their own (spec §4.5)."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from store.tables import DialogTurnRow
from tests.channels.helpers import channel_worker
from tests.harness import Harness, Stack
from usecases.peers import ExchangeEvent, StopReason, follow_conversation, start_conversation

FAST_PACING = {
    "min_interval_seconds": 0.2,
    "listen_seconds": 0.1,
    "jitter_seconds": 0.2,
    "max_wait_seconds": 2.0,
}


def _replies(*pairs: tuple[str, str]) -> list[ScriptRule]:
    """Respond with the reply of the first pattern found in the message answered."""
    return [ScriptRule(task="respond", match=match, reply=reply) for match, reply in pairs]


GARDEN = _replies(
    ("garden", "Tomatoes want six hours of sun; where would the beds go?"),
    ("six hours", "The south fence gets afternoon sun, so the beds could line it."),
    ("south fence", "Then a rain barrel by the shed could water those beds."),
    ("rain barrel", "I agree, a rain barrel by the shed."),
)
"""A plan that converges: the fourth reply only agrees."""

AGREEABLE = _replies(
    ("Yes, bread.", "Yes, bread."),
    ("Yes, bake bread.", "Yes, bread."),
    ("bake bread", "Yes, bake bread."),
)
"""Every reply only agrees: each agent's first is still sent, the second one's next is not."""

FOREVER = _replies(
    ("moon", "Volcanoes build islands from molten rock over long ages."),
    ("volcanoes", "The moon pulls tides across every ocean twice daily."),
)
"""Two agents that always have something new to say."""


async def converse(harness: Harness, opening: str) -> tuple[str, str, list[ExchangeEvent]]:
    first = await harness.create_agent(name="Ada")
    second = await harness.create_agent(name="Bo")
    settings = harness.deps.settings
    opening_id = await start_conversation(
        settings=settings,
        client=harness.client,
        first=first.handle,
        second=second.handle,
        opening=opening,
        task_queue=harness.task_queue,
    )
    events = [
        e async for e in follow_conversation(settings=settings, opening_id=opening_id, timeout=150)
    ]
    return first.handle, second.handle, events


async def test_two_agents_converse_until_one_has_nothing_to_add(
    client: Client, stack: Stack
) -> None:
    overrides: dict[str, object] = {"pacing": FAST_PACING}
    async with channel_worker(client, stack, rules=GARDEN, settings_overrides=overrides) as harness:
        first, second, events = await converse(harness, "Let's plan a garden this spring.")

        said = [e for e in events if e.stopped is None]
        assert [e.sender for e in said] == [first, second, first, second]
        assert said[-1].text == "Then a rain barrel by the shed could water those beds."
        end = events[-1]
        assert end.stopped is StopReason.SILENCE and end.sender == first
        assert end.reason is not None and "only agrees" in end.reason
        # Each remembers the exchange in its own dialog: what it heard and what it said.
        async with harness.db.session() as session:
            for handle, heard in ((first, 2), (second, 2)):
                count = (
                    await session.exec(
                        select(func.count())
                        .select_from(DialogTurnRow)
                        .where(DialogTurnRow.agent == handle, DialogTurnRow.role == "person")
                    )
                ).one()
                assert count == heard, handle


async def test_an_agents_first_reply_is_sent_even_when_it_only_agrees(
    client: Client, stack: Stack
) -> None:
    overrides: dict[str, object] = {"pacing": FAST_PACING}
    async with channel_worker(
        client, stack, rules=AGREEABLE, settings_overrides=overrides
    ) as harness:
        first, second, events = await converse(harness, "Shall we bake bread on Sunday?")

    said = [e for e in events if e.stopped is None]
    assert [(e.sender, e.text) for e in said] == [
        (first, "Shall we bake bread on Sunday?"),
        (second, "Yes, bake bread."),
        (first, "Yes, bread."),
    ]
    end = events[-1]
    assert end.stopped is StopReason.SILENCE and end.sender == second
