"""Recall told as one account by the recall task: fenced, citing only what it was shown, and
the lines as they are whenever the model is slow, failing, off the plan or out of bounds."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from activities.context.assembler import fit
from activities.gateway.gateway import ModelGateway
from activities.gateway.plans import local_plan
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from activities.gateway.registry import ModelRegistry
from activities.memory.encoders.null import NullEncoder
from activities.memory.recall import MemoryBlock, MemoryRecall
from activities.memory.synthesizer import RecallSynthesizer, usable
from activities.prompts import load
from schemas.fences import TAG
from schemas.ids import new_ulid
from schemas.memory import MemorySettings, ScoreBand
from schemas.models import ModelBinding, ProviderName, TaskType
from schemas.recall import RecallMode, RetrievedMemory, SurfacedMemories
from store.db import Database
from tests.fences import only_fenced
from tests.memory.recall.records import add_channel, add_memory, new_agent
from tests.memory.recall.test_fencing import ADA, ATTACK, CHANNEL, assemble

SETTINGS = MemorySettings(synthesis_min_lines=3, synthesis_timeout_seconds=1.0)
ACCOUNT = "Ada grew tomatoes all summer; she first mentioned them in May."


def gateway(
    rules: list[ScriptRule], *, tiny: bool = False
) -> tuple[ModelGateway, ScriptedProvider]:
    provider = ScriptedProvider(Script(rules=rules))
    binding = ModelBinding(provider=ProviderName.SCRIPTED, model="m", context_window=8192)
    registry = ModelRegistry(
        bindings=dict.fromkeys(TaskType, binding),
        plans={ProviderName.SCRIPTED: local_plan()} if tiny else {},
    )
    return ModelGateway(registry, {ProviderName.SCRIPTED: provider}), provider


async def _memories(db: Database) -> tuple[str, list[str]]:
    agent = await new_agent(db, "synth")
    channel_id = await add_channel(db, agent, CHANNEL)
    summaries = [
        "Ada told me about her garden tomatoes in May.",
        f"Ada said her garden tomatoes were ripening. {ATTACK}",
        "Ada gave me garden tomatoes to taste; they were sweet.",
        "Ada asked which garden tomatoes grow best in shade.",
    ]
    ids = [
        await add_memory(db, agent=agent, channel_id=channel_id, summary=s, participants=[ADA])
        for s in summaries
    ]
    return agent, ids


def _recall(db: Database, model: ModelGateway) -> MemoryRecall:
    return MemoryRecall(db, NullEncoder(), SETTINGS, RecallSynthesizer(model, SETTINGS))


async def test_the_account_stands_for_its_lines_fenced_and_the_request_fences_the_memories(
    db: Database,
) -> None:
    agent, ids = await _memories(db)
    cited = f"{ACCOUNT} [{ids[0]}] [{ids[2]}]"
    model, provider = gateway([ScriptRule(task="recall", reply=json.dumps({"synthesis": cited}))])
    prompt = await assemble(db, agent, [_recall(db, model)])

    [block] = only_fenced(prompt.system, ACCOUNT)
    assert block.source == "memory"
    assert load("memory_synthesized.md") in prompt.system
    assert (
        ATTACK not in prompt.system
    )  # the account did not carry it; the lines it tells are not shown
    shown = prompt.extra["memory"]
    assert shown["synthesis"] == cited and shown["synthesized"] == len(ids)
    assert {r["id"] for r in shown["records"]} == set(ids)  # the critic still sees every record
    [request] = provider.requests
    assert request.task is TaskType.RECALL
    only_fenced(request.messages[-1].content, ATTACK)


@pytest.mark.parametrize(
    "rule",
    [
        ScriptRule(task="recall", fail="timeout"),
        ScriptRule(task="recall", fail="rate_limit"),
        ScriptRule(task="recall", reply=json.dumps({"synthesis": ACCOUNT}), delay_ms=1500),
        ScriptRule(task="recall", reply="Here is what I remember: tomatoes."),
        ScriptRule(task="recall", reply=json.dumps({"synthesis": f"{ACCOUNT} [{new_ulid()}]"})),
    ],
    ids=["timeout", "429", "slow", "not json", "cites another memory"],
)
async def test_any_failure_shows_the_lines_as_they_are(db: Database, rule: ScriptRule) -> None:
    agent, ids = await _memories(db)
    model, _ = gateway([rule])
    prompt = await assemble(db, agent, [_recall(db, model)])

    assert ACCOUNT not in prompt.system
    assert load("memory_context.md") in prompt.system
    assert all(i in prompt.system for i in ids)
    assert prompt.extra["memory"]["synthesis"] is None


async def test_the_tiny_plan_and_a_short_find_never_call_the_model(db: Database) -> None:
    agent, _ = await _memories(db)
    model, provider = gateway([ScriptRule(task="recall", reply='{"synthesis": "x"}')], tiny=True)
    await assemble(db, agent, [_recall(db, model)])
    few = MemorySettings(synthesis_min_lines=50)
    hosted, other = gateway([ScriptRule(task="recall", reply='{"synthesis": "x"}')])
    await assemble(
        db, agent, [MemoryRecall(db, NullEncoder(), few, RecallSynthesizer(hosted, few))]
    )
    assert provider.requests == [] and other.requests == []


def test_an_account_is_used_only_within_bounds() -> None:
    shown = [new_ulid(), new_ulid()]
    assert usable(f"Yes [{shown[0]}].", shown=shown, max_chars=100) == f"Yes [{shown[0]}]."
    assert usable(f"Yes [{new_ulid()}].", shown=shown, max_chars=100) is None
    assert usable("nul \x00 here", shown=shown, max_chars=100) is None
    assert usable("x" * 101, shown=shown, max_chars=100) is None
    assert usable("   ", shown=shown, max_chars=100) is None


def test_a_budget_that_drops_a_told_line_drops_the_account() -> None:
    records = [
        RetrievedMemory(
            id=new_ulid(),
            summary=f"memory number {n} about tomatoes",
            band=ScoreBand.MODERATE,
            score=0.5,
            created_at=datetime(2026, 5, 1, tzinfo=UTC),
        )
        for n in range(4)
    ]
    surfaced = SurfacedMemories(
        mode=RecallMode.SEMANTIC, records=records, synthesis=ACCOUNT, synthesized=3
    )
    block = MemoryBlock(surfaced=surfaced, share=1.0, timezone="UTC")
    assert ACCOUNT in block.render() and "More memories" in block.render()
    fit([block], budget=block.tokens() - 1, window=10_000)  # drops the untold fourth line
    assert ACCOUNT in block.render() and "More memories" not in block.render()
    # Too tight for the account: lines go until what is left fits, and never the account
    # for lines it no longer has.
    tight = MemoryBlock(surfaced=surfaced, share=1.0, timezone="UTC")
    fit([tight], budget=block.tokens() - 1, window=10_000)
    assert len(tight.items) < 3
    assert ACCOUNT not in tight.render() and f"</{TAG}>" in tight.render()
