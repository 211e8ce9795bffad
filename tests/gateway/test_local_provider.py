"""The local provider against the real llama.cpp server: every schema Persyn sends, for real.

The server runs in its own process (the ``local_model_server`` session fixture), as the stack
runs it. Replies go through the gateway with the local call plan, exactly as the worker sends
them: capped, sampled with penalties, schemas clamped, repeated sentences cut.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import jsonschema
import pytest
from pydantic import BaseModel
from temporalio.client import Client

from activities.deliberation.judge import JUDGE_SCHEMA, parse_verdict
from activities.deliberation.objections import CRITIQUE_SCHEMA, parse_objections
from activities.gateway.gateway import ModelGateway
from activities.gateway.plans import local_plan
from activities.gateway.providers.local import LocalProvider
from activities.gateway.registry import ModelRegistry
from activities.gateway.repetition import repeated_sentence
from activities.tools.builtin import build_registry
from activities.tools.builtin.deps import ToolDeps
from activities.tools.builtin.reminders import reminder_tools
from contract.provider_errors import ProviderServerError
from schemas.memory_formation import ClassificationReply, RatingReply, SummaryReply
from schemas.models import (
    CallPlan,
    ChatMessage,
    ModelBinding,
    ModelRequest,
    ProviderName,
    StagePlan,
    TaskType,
    ToolSpec,
)
from schemas.settings import Settings
from store.db import Database
from tests.gateway.conftest import Deltas
from workers.model_server import ModelServer, chat_format_for, default_model_path

PERSONA = (
    "You are Ava, a warm and curious agent who talks with people in a chat. "
    "It is Tuesday, 1 December 2026, 8:30 AM (morning, UTC). Answer briefly."
)
DIALOG = (
    "Sam: Hi Ava, I spent Sunday at the beach looking at tide pools.\n"
    "Ava: That sounds lovely! What did you find?\n"
    "Sam: Crabs, anemones and a starfish. I want to go back next week with my sister."
)


def every_stage_runs() -> CallPlan:
    """The local plan, with critique and refinement on so their requests go out too."""
    plan = local_plan()
    stages = dict(plan.stages)
    for task in (TaskType.CRITIQUE, TaskType.REFINE):
        stages[task] = stages[task].model_copy(update={"run": True})
    return plan.model_copy(update={"stages": stages})


@pytest.fixture(scope="module")
async def gateway(local_model_server: str) -> AsyncIterator[ModelGateway]:
    binding = ModelBinding(
        provider=ProviderName.LOCAL, model="smollm2", context_window=8192, max_output_tokens=160
    )
    registry = ModelRegistry(
        bindings=dict.fromkeys(TaskType, binding), plans={ProviderName.LOCAL: every_stage_runs()}
    )
    provider = LocalProvider(base_url=local_model_server, timeout_seconds=60)
    gw = ModelGateway(registry, {ProviderName.LOCAL: provider})
    yield gw
    await gw.aclose()


def ask(task: TaskType, text: str, schema: dict[str, Any] | None = None) -> ModelRequest:
    return ModelRequest(
        task=task,
        system=PERSONA,
        messages=[ChatMessage(role="user", content=text)],
        response_schema=schema,
        temperature=0.0 if schema is not None else None,
    )


def test_the_default_model_ships_with_the_local_extra() -> None:
    assert default_model_path().is_file()


@pytest.mark.local_model
@pytest.mark.parametrize(
    "task,reply",
    [
        (TaskType.SUMMARIZE, SummaryReply),
        (TaskType.RATE, RatingReply),
        (TaskType.CLASSIFY, ClassificationReply),
    ],
    ids=["summarize", "rate", "classify"],
)
async def test_memory_formation_schemas_come_back_valid(
    gateway: ModelGateway, task: TaskType, reply: type[BaseModel]
) -> None:
    # SummaryReply's maxLength of 8000 is what crashed llama.cpp before schemas were clamped.
    response = await gateway.complete(
        ask(task, f"Remember this conversation as JSON.\n{DIALOG}", reply.model_json_schema())
    )

    reply.model_validate_json(response.text)


@pytest.mark.local_model
async def test_the_decide_verdict_is_short_and_parses(gateway: ModelGateway) -> None:
    response = await gateway.complete(
        ask(TaskType.DECIDE, f"Should Ava reply to Sam? Answer as JSON.\n{DIALOG}", JUDGE_SCHEMA)
    )

    verdict = parse_verdict(response.text)
    assert verdict is not None
    assert len(verdict.reason) <= 100
    assert response.usage.output_tokens <= 64


@pytest.mark.local_model
async def test_a_critique_comes_back_as_objections(gateway: ModelGateway) -> None:
    response = await gateway.complete(
        ask(
            TaskType.CRITIQUE,
            'List objections to this reply as JSON: "Starfish are fish and live in rivers."',
            CRITIQUE_SCHEMA,
        )
    )

    parse_objections(response.text, limit=8)


def platform_tools() -> list[ToolSpec]:
    settings = Settings(provider="local")
    deps = ToolDeps(
        db=Database("postgresql+psycopg://nobody@127.0.0.1:1/none"),
        settings=settings,
        models=ModelRegistry.from_settings(settings),
    )
    # Reminder tools need a client only when called; their schemas are what matter here.
    with_client = dataclasses.replace(deps, client=cast(Client, object()))
    registry = build_registry(deps, extra=reminder_tools(with_client))
    return registry.specs()


@pytest.mark.local_model
async def test_every_tool_input_schema_compiles_and_its_arguments_validate(
    gateway: ModelGateway,
) -> None:
    tools = platform_tools()
    assert len(tools) >= 8
    for tool in tools:
        response = await gateway.complete(
            ask(
                TaskType.CLASSIFY,
                f"Call the tool {tool.name}: {tool.description}",
                tool.input_schema,
            )
        )
        jsonschema.validate(__import__("json").loads(response.text), tool.input_schema)


@pytest.mark.local_model
@pytest.mark.parametrize("task", [TaskType.RESPOND, TaskType.REFINE])
async def test_a_streamed_reply_has_no_repeated_sentence(
    gateway: ModelGateway, task: TaskType
) -> None:
    deltas = Deltas()
    response = await gateway.complete(
        ask(task, "Hello Ava! I'm Sam, I just joined the team. What do you make of tide pools?"),
        on_delta=deltas,
    )

    assert response.text.strip()
    assert repeated_sentence(response.text) is None
    assert "".join(deltas.pieces).strip() == response.text.strip()
    assert 0 < response.usage.output_tokens <= 200  # estimated: the stream reports none


@pytest.mark.local_model
async def test_concurrent_calls_are_both_served(gateway: ModelGateway) -> None:
    replies = await asyncio.gather(
        gateway.complete(ask(TaskType.RESPOND, "Say yes.")),
        gateway.complete(ask(TaskType.RESPOND, "Say no.")),
    )

    assert all(reply.text.strip() for reply in replies), replies


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_server_that_is_not_running_fails_the_call_as_retryable() -> None:
    provider = LocalProvider(base_url=f"http://127.0.0.1:{closed_port()}/v1", timeout_seconds=5)
    binding = ModelBinding(provider=ProviderName.LOCAL, model="smollm2", context_window=8192)
    try:
        with pytest.raises(ProviderServerError) as raised:
            await provider.complete(ask(TaskType.RESPOND, "Hello?"), binding)
    finally:
        await provider.aclose()

    assert raised.value.retryable
    assert "local model server" in str(raised.value)


@pytest.mark.local_model
async def test_a_server_crash_mid_call_fails_that_call_only(tmp_path: Path) -> None:
    path = default_model_path()
    server = ModelServer(
        model_path=path,
        port=closed_port(),
        context_tokens=2048,
        chat_format=chat_format_for(path),
        log_file=tmp_path / "model-server.log",
    )
    process = server.start(detached=False)
    provider = LocalProvider(base_url=server.base_url, timeout_seconds=30)
    binding = ModelBinding(
        provider=ProviderName.LOCAL, model="smollm2", context_window=2048, max_output_tokens=400
    )
    started = asyncio.Event()

    async def first_piece(_: str) -> None:
        started.set()

    try:
        await asyncio.to_thread(server.wait_ready, process, timeout=60)
        call = asyncio.ensure_future(
            provider.complete(
                ask(TaskType.RESPOND, "Count from one to two hundred in words."),
                binding,
                on_delta=first_piece,
            )
        )
        await started.wait()
        process.kill()  # what a native crash looks like from here
        with pytest.raises(ProviderServerError) as raised:
            await call
        assert raised.value.retryable
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        await provider.aclose()


def test_the_plan_caps_every_structured_stage() -> None:
    plan = local_plan()
    for task in (TaskType.SUMMARIZE, TaskType.RATE, TaskType.CLASSIFY, TaskType.DECIDE):
        stage: StagePlan = plan.stage(task)
        assert stage.max_output_tokens is not None and stage.max_output_tokens <= 200
