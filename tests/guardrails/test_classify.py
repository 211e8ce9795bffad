"""Escalation rated by the model when a rule asks: the classify task through the gateway.

Politely worded menace scores low lexically; the (scripted) model rates it rising. A failed
call leaves the lexical score in place, so the rule stays quiet rather than failing.
"""

from __future__ import annotations

import json

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from activities.guardrails.hostility import hostility
from schemas.models import TaskType
from tests.guardrails.helpers import fired_on, guarded_worker, rules_file
from tests.harness import Stack

POLITE_MENACE = [
    "I would like my refund, please.",
    "I know where your office is, you know.",
    "It would be a shame if something happened to your servers tonight.",
]

BY_MODEL = rules_file(
    """\
  - id: menace
    pattern: {kind: escalating_conflict, rising: 3, threshold: 0.5, classify: true}
    actions: [notify]
  - id: menace-lexical
    pattern: {kind: escalating_conflict, rising: 3, threshold: 0.5}
    actions: [notify]
"""
)


def rated(*scores: float) -> ScriptRule:
    """The model's rating of a request holding as many messages as ``scores``."""
    return ScriptRule(
        task="classify",
        system_match="safety monitor",
        match=f"Message {len(scores)}:",
        reply=json.dumps({"scores": scores}),
    )


async def _last_exchange(client: Client, stack: Stack, script: list[ScriptRule]) -> list[str]:
    async with guarded_worker(client, stack, rules_yaml=BY_MODEL, script=script) as harness:
        agent = (await harness.create_agent()).handle
        receipts = [await harness.say(agent, text) for text in POLITE_MENACE]
        fired = await fired_on(harness, receipts[-1])
        asked = [r for r in harness.provider.requests if r.task is TaskType.CLASSIFY]
        if asked:
            # Other people's words reach the classifier fenced, never as instructions.
            assert POLITE_MENACE[-1] in asked[-1].messages[0].content
            assert '<material source="dialog"' in asked[-1].messages[0].content
        return fired


async def test_the_model_sees_menace_the_lexical_score_misses(client: Client, stack: Stack) -> None:
    assert all(hostility(text) < 0.5 for text in POLITE_MENACE)
    # Earlier exchanges are rated too (fewer turns); the last one rises past the threshold.
    script = [rated(0.1, 0.4, 0.8), rated(0.1, 0.4), rated(0.1)]
    assert await _last_exchange(client, stack, script) == ["menace"]


async def test_a_failed_rating_leaves_the_lexical_score(client: Client, stack: Stack) -> None:
    refused = ScriptRule(task="classify", system_match="safety monitor", fail="invalid")
    assert await _last_exchange(client, stack, [refused]) == []
