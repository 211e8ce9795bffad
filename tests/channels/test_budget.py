"""The token budget between agents counts every model token, and stops replies before they cost.

Two agents that always have something new to say talk through the ordinary pipeline on the
scripted model. The budget is read from the usage ledger (every call the agent's runs on the
channel made: respond, decide, and whatever else), and asked before a reply is generated: once
it is spent, the agent stays silent without calling the model, and no message is generated
only to be refused by pacing.
"""

from __future__ import annotations

from collections import Counter

from sqlmodel import col, select
from temporalio.client import Client

from schemas.delivery import DeliveryStatus
from schemas.models import TaskType
from schemas.peers import agent_channel
from store.tables import OutboxRow, UsageRow
from tests.channels.helpers import channel_worker
from tests.channels.test_converse import FAST_PACING, FOREVER, converse
from tests.harness import Harness, Stack
from usecases.peers import StopReason

BUDGET = 300


async def _ledger(harness: Harness, agent: str, other: str) -> Counter[str]:
    """Model tokens per activation of ``agent`` on its channel to ``other``."""
    await harness.deps.meters.flush()
    async with harness.db.session() as session:
        rows = await session.exec(
            select(UsageRow).where(
                UsageRow.agent == agent, UsageRow.channel == agent_channel(other).key
            )
        )
        spent: Counter[str] = Counter()
        for row in rows:
            spent[str(row.activation)] += row.input_tokens + row.output_tokens
        return spent


async def test_the_budget_counts_every_model_token_and_stops_replies_before_they_are_generated(
    client: Client, stack: Stack
) -> None:
    overrides: dict[str, object] = {"pacing": {**FAST_PACING, "budget_tokens": BUDGET}}
    async with channel_worker(
        client, stack, rules=FOREVER, settings_overrides=overrides
    ) as harness:
        first, second, events = await converse(harness, "Think about the moon tonight.")

        end = events[-1]
        assert end.stopped is StopReason.BLOCKED
        assert end.reason is not None and "token budget exhausted" in end.reason
        said = [e for e in events if e.stopped is None]
        # Every respond call became a message that went out: none was generated once the
        # budget was spent (the opening is the person's, not generated).
        responds = sum(1 for r in harness.provider.requests if r.task is TaskType.RESPOND)
        assert responds == len(said) - 1
        async with harness.db.session() as session:
            refused = (
                await session.exec(
                    select(OutboxRow).where(
                        col(OutboxRow.agent).in_([first, second]),
                        OutboxRow.status == DeliveryStatus.BLOCKED,
                    )
                )
            ).all()
        assert refused == []

        for agent, other in ((first, second), (second, first)):
            per_activation = await _ledger(harness, agent, other)
            total = sum(per_activation.values())
            # Within the budget but for the one exchange that was afforded before it ran out.
            if per_activation:
                assert total - max(per_activation.values()) < BUDGET, (agent, per_activation)
        # The agent that stopped had spent its budget.
        stopped = end.sender
        assert sum((await _ledger(harness, stopped, end.recipient)).values()) >= BUDGET
