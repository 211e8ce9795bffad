"""The activation's steps as plain async functions, for the cost of durability.

The very activities a worker registers (``workers.build.activities``: every context source,
the tool-offering generation step, the same SQL), looked up by name and awaited
one after another with no Temporal in between; also the benchmark's channel and events.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from bench.harness import BenchStack, new_agent
from schemas.activation import (
    AssembleContextInput,
    RecordOutcomeInput,
    TransmitInput,
)
from schemas.deliberation import DeliberationPlanInput, ScreenInput, SettleInput
from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef, CompletionMarker, InboundEvent, Outcome, Speaker
from schemas.ids import new_ulid
from schemas.records import OpenConversationInput, RecordTurnInput, ResolveSpeakerInput
from schemas.tools import RespondInput
from workers.build import Dependencies, activities, build_dependencies

CHANNEL = ChannelRef(service="terminal", channel="bench")


def make_event(text: str, speaker: str = "bench") -> InboundEvent:
    return InboundEvent(
        event_id=new_ulid(), channel=CHANNEL, speaker=Speaker(speaker_id=speaker), text=text
    )


def worker_activities(deps: Dependencies) -> dict[str, Callable[..., Awaitable[Any]]]:
    """The activities a worker registers, bound to ``deps``, by qualified name."""
    return {fn.__qualname__: fn for fn in activities(deps)}


async def plain_pipeline(stack: BenchStack, n: int) -> list[float]:
    """The activation's steps as plain awaits: no Temporal, the worker's own activities."""
    deps = build_dependencies(stack.settings(), dsn=stack.dsn)
    run = worker_activities(deps)
    handle = await new_agent(deps.db)
    conversation = new_ulid()
    await run["StoreActivities.open_conversation"](
        OpenConversationInput(
            conversation_id=conversation, agent=handle, channel=CHANNEL, opened_at=_now()
        )
    )
    window: list[str] = []
    latencies = []
    for i in range(n):
        started = time.perf_counter()
        event = make_event(f"message {i}")
        person = await run["StoreActivities.resolve_speaker"](
            ResolveSpeakerInput(
                agent=handle, channel=CHANNEL, speaker=event.speaker, seen_at=_now()
            )
        )
        turn = DialogTurn(
            turn_id=event.event_id,
            conversation_id=conversation,
            role=Role.PERSON,
            speaker_id=person.person_id,
            speaker_name=person.person_name,
            text=event.text,
            at=_now(),
        )
        await run["StoreActivities.record_turn"](
            RecordTurnInput(agent=handle, channel=CHANNEL, turn=turn)
        )
        window = [*window, turn.turn_id][-40:]
        activation = new_ulid()
        prompt = await run["ContextActivities.assemble"](
            AssembleContextInput(
                activation_id=activation,
                agent=handle,
                conversation_id=conversation,
                channel=CHANNEL,
                event=event,
                person_id=person.person_id,
                participants=[person.person_id],
                window_turn_ids=window,
                now=_now(),
            )
        )
        generated = await run["GenerationActivities.generate"](
            RespondInput(prompt=prompt, agent=handle, tools="offer")
        )
        plan = await run["DeliberationActivities.plan"](
            DeliberationPlanInput(agent=handle, channel=CHANNEL, candidate=generated.text)
        )
        screening = await run["DecideActivities.screen"](
            ScreenInput(agent=handle, channel=CHANNEL, event=event, candidate=generated.text)
        )
        assert screening.verdict is not None and screening.verdict.speak
        sent = await run["ChannelActivities.transmit"](
            TransmitInput(
                activation_id=activation,
                event_id=event.event_id,
                agent=handle,
                agent_name="Bench",
                conversation_id=conversation,
                channel=CHANNEL,
                turn_id=new_ulid(),
                text=generated.text,
                at=_now(),
            )
        )
        window = [*window, sent.turn.turn_id][-40:]
        await run["StoreActivities.record_outcome"](
            RecordOutcomeInput(
                agent=handle,
                trigger="message",
                marker=CompletionMarker(
                    event_id=event.event_id,
                    activation_id=activation,
                    conversation_id=conversation,
                    outcome=Outcome.SPOKE,
                    text=generated.text,
                    completed_at=_now(),
                    expires_at=_now(),
                ),
            )
        )
        await run["DeliberationActivities.settle"](
            SettleInput(
                activation_id=activation,
                agent=handle,
                channel_key=CHANNEL.key,
                event_id=event.event_id,
                prompt_id=prompt.prompt_id,
                transmitted=True,
                verdict=screening.verdict,
                mode=plan.mode,
                at=_now(),
            )
        )
        latencies.append((time.perf_counter() - started) * 1000)
    await deps.aclose()
    return latencies


def _now() -> datetime:
    return datetime.now(UTC)
