"""Conversations teach the agent facts: blind extraction, then reconciliation per fact.

A scripted model plays extraction and reconciliation; the worker, Temporal and PostgreSQL
are real. The conversation closes on idle, and its closing observation run is awaited with it.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime

import pytest
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from schemas.events import ChannelRef, Speaker
from schemas.models import CallPlan, ModelRequest, ProviderName, StagePlan, TaskType
from schemas.observations import OFF_ON_PLAN, Observation, ObservationProposal
from store.db import Database
from store.queries.observations import (
    active_observations,
    record_observation,
    supersede_chain,
    to_observation,
)
from store.queries.people import resolve_speaker
from store.tables.observations import ObservationRow
from tests.graph.helpers_pipeline import converse
from tests.harness import Harness, Stack
from tests.memory.formation.helpers import (
    formation_rules,
    formation_worker,
    new_agent,
    whole_prompt,
)

EXTRACT = "note durable facts"
RECONCILE = "keep .* notes about one subject"


def facts(*items: tuple[str, str, str]) -> str:
    return json.dumps(
        {"facts": [{"subject": s, "type": t, "value": v, "trust": "self"} for s, t, v in items]}
    )


def script() -> list[ScriptRule]:
    """Fresh rules for each test (a rule counts its uses)."""
    return [
        ScriptRule(
            task="observe",
            system_match=EXTRACT,
            match="Leeds",
            reply=facts(("Ada", "home_city", "lives in Leeds"), ("Ada", "job", "works as a nurse")),
        ),
        ScriptRule(
            task="observe",
            system_match=EXTRACT,
            match="York",
            reply=facts(("Ada", "Home City", "lives in York"), ("Bob", "job", "a pilot")),
        ),
        ScriptRule(
            task="observe",
            system_match=RECONCILE,
            match="York",
            reply='{"action": "UPDATE", "target": "F1", "reason": "Ada moved"}',
        ),
        ScriptRule(
            task="observe",
            system_match=EXTRACT,
            match="dog",
            reply=facts(("Ada", "pet", "has a cat")),
        ),
        # A new fact beside held ones of other kinds is added, the first time it is seen.
        ScriptRule(
            task="observe",
            system_match=RECONCILE,
            match=r"(works as a nurse|has a cat) \(self\)\n",
            reply='{"action": "ADD", "target": null, "reason": "new"}',
            times=2,
        ),
        # Anything else asked of reconciliation is not JSON: retried once, then dropped.
        ScriptRule(task="observe", system_match=RECONCILE, reply="Probably an update, I think."),
    ]


def requests(harness: Harness, system: str) -> list[ModelRequest]:
    return [
        r
        for r in harness.provider.requests
        if r.task.value == "observe" and re.search(system, r.system, re.IGNORECASE)
    ]


async def someone_else(db: Database, agent: str) -> str:
    """Bob, met elsewhere, with a home city of his own on record."""
    async with db.session() as session:
        bob = await resolve_speaker(
            session,
            agent=agent,
            channel=ChannelRef(service="team", channel="elsewhere"),
            speaker=Speaker(speaker_id="bob", display_name="Bob"),
            seen_at=datetime.now(UTC),
        )
    proposal = ObservationProposal(
        person_id=bob.person_id,
        type="home_city",
        value="lives in Oslo",
        trust="self",
        observed_at=datetime.now(UTC),
    )
    async with db.session() as session:
        await record_observation(session, agent=agent, proposal=proposal, embedding=None)
    return bob.person_id


async def test_facts_are_learned_blind_and_reconciled_against_the_subjects_own(
    client: Client, stack: Stack
) -> None:
    rules = [*script(), *formation_rules()]
    async with formation_worker(client, stack, rules=rules) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.1)
        bob = await someone_else(harness.db, agent)

        await converse(harness, agent, "I live in Leeds and I work as a nurse.")
        first = len(requests(harness, EXTRACT))
        await converse(harness, agent, "Big news: I moved to York last week!")

        async with harness.db.session() as session:
            active = await active_observations(session, agent=agent, person_ids=[None])
            ada = [o for o in await _all_active(session, agent) if o.person_id not in (None, bob)]
            (york,) = [o for o in ada if o.type == "home_city"]
            chain = await supersede_chain(session, agent=agent, observation_id=york.id)

    assert active == []  # nothing about the agent itself
    assert sorted(o.value for o in ada) == ["lives in York", "works as a nurse"]
    assert [(o.value, o.status) for o in chain] == [
        ("lives in York", "active"),
        ("lives in Leeds", "superseded"),
    ]
    assert chain[0].reason == "Ada moved"
    # Bob was not in the conversation: a fact extraction files under him is dropped.
    assert "a pilot" not in [o.value for o in ada]

    extractions = requests(harness, EXTRACT)
    assert first == 1 and len(extractions) == 2
    # Blind: the second extraction knew nothing of what the first taught.
    second = whole_prompt(extractions[1])
    assert "Leeds" not in second and "nurse" not in second and "Oslo" not in second
    # Reconciliation saw Ada's own facts, never Bob's.
    reconciliations = requests(harness, RECONCILE)
    assert len(reconciliations) == 2  # the job beside the held city, then the move
    shown = whole_prompt(reconciliations[1])
    assert "lives in Leeds" in shown and "works as a nurse" in shown
    assert "Oslo" not in shown


async def test_a_reply_that_does_not_parse_is_retried_once_then_dropped(
    client: Client, stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    rules = [*script(), *formation_rules()]
    caplog.set_level(logging.WARNING, logger="activities.observations.activities")
    async with formation_worker(client, stack, rules=rules) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.1)
        await converse(harness, agent, "I live in Leeds and I work as a nurse.")
        await converse(harness, agent, "My dog says hello.")  # a pet: added
        await converse(harness, agent, "The dog again, sorry!")  # the pet again: no answer

        async with harness.db.session() as session:
            ada = await _all_active(session, agent)

    cat = [r for r in requests(harness, RECONCILE) if "has a cat (self)\n" in whole_prompt(r)]
    assert len(cat) == 3  # added once; then the unreadable answer, tried once more, dropped
    assert sorted(o.value for o in ada) == ["has a cat", "lives in Leeds", "works as a nurse"]
    assert any("reconciliation dropped" in r.getMessage() for r in caplog.records)


async def _all_active(session: AsyncSession, agent: str) -> list[Observation]:
    """Every active observation of the agent, whoever it is about."""
    rows = (
        await session.exec(
            select(ObservationRow).where(
                ObservationRow.agent == agent, ObservationRow.status == "active"
            )
        )
    ).all()
    return [to_observation(r) for r in rows]


async def test_a_plan_with_observing_off_asks_nothing_and_says_so(
    client: Client, stack: Stack
) -> None:
    rules = [*script(), *formation_rules()]
    plans = {ProviderName.SCRIPTED: CallPlan(stages={TaskType.OBSERVE: StagePlan(run=False)})}
    async with formation_worker(
        client, stack, rules=rules, settings_overrides={"call_plans": plans}
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.1)
        await converse(harness, agent, "I live in Leeds and I work as a nurse.")
        async with harness.db.session() as session:
            learned = await _all_active(session, agent)
        observing = [r for r in harness.provider.requests if r.task is TaskType.OBSERVE]
        [run] = [
            w
            async for w in client.list_workflows(
                f"WorkflowType = 'ObservationWorkflow' AND {names.AGENT.name} = '{agent}'"
            )
        ]
        result = await client.get_workflow_handle(run.id).result()

    assert observing == [] and learned == []
    assert OFF_ON_PLAN in json.dumps(result)
