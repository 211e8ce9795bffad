"""A worker for the deliberation tests: scripted model, optional fake memory and guardrails."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sqlmodel import col, select
from temporalio.client import Client

from activities.context.model import ContextBlock, ContextRequest, ContextSource
from activities.deliberation.guardrails import GuardrailCheck
from activities.gateway.base import DeltaCallback
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from contract import names
from observability.metering.hub import UsageMeter
from schemas.activation import ActivationResult
from schemas.agents import AgentConfig, AgentCreate
from schemas.deliberation import DeliberationResult, ScreenInput
from schemas.models import ModelBinding, ModelRequest, ModelResponse, ProviderName, TaskType
from store.db import Database
from store.queries.agents import create_agent
from store.tables import PromptRow
from tests.harness import Harness, Stack, close_dependencies, dependencies, unique
from workers.build import build_worker
from workflows.activation import ActivationWorkflow

CLAIM = (
    "We agreed last Tuesday that you would send me the quarterly report by Friday, and you "
    "promised to include the regional figures."
)
HEDGED = (
    "I'd guess we have talked about the quarterly report, but I don't actually remember agreeing "
    "on a Friday deadline, so tell me what you had in mind."
)
CONFABULATION: dict[str, Any] = {
    "type": "confabulation",
    "span": "We agreed last Tuesday",
    "explanation": "No retrieved record mentions an agreement about the report or a deadline.",
    "severity": 8,
    "correction": "Frame it as a guess, or ask.",
}


def objections(*items: dict[str, Any]) -> str:
    return json.dumps({"objections": list(items)})


def verdict(speak: bool, reason: str) -> str:
    return json.dumps({"speak": speak, "reason": reason})


def claim_rules(
    *, provenance_reply: str | None = None, lens_reply: str = objections()
) -> list[ScriptRule]:
    """Asked about "the report", the agent makes a claim about the past no record supports; the
    provenance critic objects, the refiner hedges. Anything else gets a short "Noted."."""
    return [
        ScriptRule(task="respond", match="report", reply=CLAIM),
        ScriptRule(task="respond", reply="Noted."),
        ScriptRule(
            task="critique",
            system_match="provenance evaluator",
            reply=provenance_reply or objections(CONFABULATION),
        ),
        ScriptRule(task="critique", reply=lens_reply),
        ScriptRule(task="refine", reply=HEDGED),
        ScriptRule(task="decide", reply=verdict(True, "I was asked and have an answer.")),
    ]


class FakeMemory:
    """Stands in for the memory source: renders ``shown`` records, lists ``listed`` in extra.

    Listing more than it shows mimics a block trimmed after the source described it.
    """

    name = "memory"
    required = False

    def __init__(self, listed: list[dict[str, Any]], shown: int | None = None) -> None:
        self.listed = listed
        self.shown = listed[:shown] if shown is not None else listed

    async def fetch(self, request: ContextRequest) -> ContextBlock:
        return ContextBlock(
            source=self.name,
            title="What you remember (relevance in brackets):",
            items=[f"- [{r['band']}] {r['summary']}" for r in self.shown],
            order=20,
            extra={"mode": "semantic", "records": self.listed, "candidates": len(self.listed)},
        )


class Veto:
    """A guardrail that vetoes every reply mentioning ``word``."""

    name = "no-word"
    fail_closed = False

    def __init__(self, word: str) -> None:
        self.word = word

    async def check(self, data: ScreenInput) -> str | None:
        if self.word in data.candidate.lower():
            return f"I held that back: it mentions {self.word}, which I keep out of this channel."
        return None


class GatedProvider(ScriptedProvider):
    """A scripted model whose calls for ``task`` wait until the test opens ``gate``."""

    def __init__(self, script: Script, task: TaskType) -> None:
        super().__init__(script)
        self.task = task
        self.gate = asyncio.Event()

    async def complete(
        self,
        request: ModelRequest,
        binding: ModelBinding,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> ModelResponse:
        if request.task is self.task:
            await self.gate.wait()
        return await super().complete(request, binding, on_delta=on_delta)


@asynccontextmanager
async def worker(
    client: Client,
    stack: Stack,
    *,
    rules: list[ScriptRule] | None = None,
    provider: ScriptedProvider | None = None,
    deliberation: dict[str, Any] | None = None,
    sources: Sequence[ContextSource] = (),
    guardrails: Sequence[GuardrailCheck] = (),
    meters: list[UsageMeter] | None = None,
    **overrides: object,
) -> AsyncIterator[Harness]:
    """A worker on a private queue whose deliberation settings are ``deliberation``."""
    settings = stack.settings(deliberation=deliberation or {}, **overrides)
    model = provider or ScriptedProvider(Script(rules=rules or []))
    deps = dependencies(
        settings, providers={ProviderName.SCRIPTED: model}, meters=meters, dsn=stack.dsn
    )
    deps.extra_sources.extend(sources)
    deps.guardrails.extend(guardrails)
    queue = unique("delib")
    running = build_worker(client, deps, task_queue=queue)
    async with running:
        yield Harness(
            client=client, task_queue=queue, deps=deps, provider=model, worker=running, db=deps.db
        )
    await close_dependencies(deps)


INLINE = {"channels": {"terminal": "inline"}}


async def new_agent(db: Database, *, idle_minutes: float = 30.0) -> str:
    handle = unique("delib")[:32]
    async with db.session() as session:
        await create_agent(
            session,
            spec=AgentCreate(
                handle=handle,
                name="Wren",
                persona="A careful, candid agent who keeps track of what it knows.",
                config=AgentConfig(idle_minutes=idle_minutes),
            ),
        )
    return handle


async def respond_prompt(db: Database, activation_id: str) -> PromptRow:
    """The stored respond prompt of one activation."""
    async with db.session() as session:
        row = (
            await session.exec(
                select(PromptRow).where(
                    PromptRow.activation_id == activation_id, col(PromptRow.task) == "respond"
                )
            )
        ).first()
    assert row is not None, f"no respond prompt for {activation_id}"
    return row


def requests_for(provider: ScriptedProvider, task: TaskType) -> list[ModelRequest]:
    return [r for r in provider.requests if r.task is task]


async def settled(harness: Harness, activation_id: str | None) -> str:
    """Wait for the activation itself to end: its receipt comes before the decision is recorded
    and the conclusions it spoke on are consumed. Returns the activation ID."""
    assert activation_id is not None
    handle = harness.client.get_workflow_handle(names.activation_workflow_id(activation_id))
    await handle.result()
    return activation_id


async def activation_result(harness: Harness, activation_id: str | None) -> ActivationResult:
    """The result of an activation, once it ended (after its release and background work)."""
    assert activation_id is not None
    handle = harness.client.get_workflow_handle_for(
        ActivationWorkflow.run, names.activation_workflow_id(activation_id)
    )
    return await handle.result()


async def deferred_conclusion(harness: Harness, activation_id: str | None) -> DeliberationResult:
    """What the deferred deliberation on an activation's reply concluded.

    An activation the agent started deliberates itself once released, so the conclusion is in
    its own result (``ActivationResult.deliberation``).
    """
    result = await activation_result(harness, activation_id)
    assert result.deliberation is not None, f"activation {activation_id} did not deliberate"
    return result.deliberation
