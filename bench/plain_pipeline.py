"""The activation's steps as plain async functions, for the cost of durability.

The same activity implementations and SQL the worker runs, awaited one after another with no
Temporal in between; also the benchmark's channel, events and agents.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from activities.channels.transmit import ChannelActivities
from activities.context.activities import ContextActivities
from activities.context.assembler import ContextAssembler
from activities.context.model import ContextSource
from activities.context.sources import ClockSource, ConstraintsSource, DialogSource, PersonaSource
from activities.deliberation.decide import DecideActivities
from activities.deliberation.parking import DeliberationActivities
from activities.generation import GenerationActivities
from activities.store import StoreActivities
from bench.harness import BenchStack, new_agent
from schemas.activation import (
    AssembleContextInput,
    GenerateInput,
    RecordOutcomeInput,
    TransmitInput,
)
from schemas.deliberation import DeliberationPlanInput, ScreenInput, SettleInput
from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef, CompletionMarker, InboundEvent, Outcome, Speaker
from schemas.ids import new_ulid
from schemas.records import OpenConversationInput, RecordTurnInput, ResolveSpeakerInput
from workers.build import build_dependencies

CHANNEL = ChannelRef(service="terminal", channel="bench")


def make_event(text: str, speaker: str = "bench") -> InboundEvent:
    return InboundEvent(
        event_id=new_ulid(), channel=CHANNEL, speaker=Speaker(speaker_id=speaker), text=text
    )


async def plain_pipeline(stack: BenchStack, n: int) -> list[float]:
    """The activation's steps as plain awaits: no Temporal, same database work."""
    deps = build_dependencies(stack.settings(), dsn=stack.dsn)
    db = deps.db
    store, channels = StoreActivities(db), ChannelActivities(db)
    decide = DecideActivities(deps.settings.deliberation, deps.guardrails)
    deliberation = DeliberationActivities(db, deps.settings.deliberation)
    sources: list[ContextSource] = [
        PersonaSource(),
        ConstraintsSource(),
        ClockSource(),
        DialogSource(db),
    ]
    context = ContextActivities(ContextAssembler(db, deps.gateway.registry, sources))
    generation = GenerationActivities(db, deps.gateway)
    handle = await new_agent(db)
    conversation = new_ulid()
    await store.open_conversation(
        OpenConversationInput(
            conversation_id=conversation, agent=handle, channel=CHANNEL, opened_at=_now()
        )
    )
    window: list[str] = []
    latencies = []
    for i in range(n):
        started = time.perf_counter()
        event = make_event(f"message {i}")
        person = await store.resolve_speaker(
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
        await store.record_turn(RecordTurnInput(agent=handle, channel=CHANNEL, turn=turn))
        window = [*window, turn.turn_id][-40:]
        activation = new_ulid()
        prompt = await context.assemble_context(
            AssembleContextInput(
                activation_id=activation,
                agent=handle,
                conversation_id=conversation,
                channel=CHANNEL,
                event=event,
                person_id=person.person_id,
                window_turn_ids=window,
                now=_now(),
            )
        )
        generated = await generation.generate(GenerateInput(prompt=prompt))
        plan = await deliberation.plan(
            DeliberationPlanInput(agent=handle, channel=CHANNEL, candidate=generated.text)
        )
        screening = await decide.screen(
            ScreenInput(agent=handle, channel=CHANNEL, event=event, candidate=generated.text)
        )
        assert screening.verdict is not None and screening.verdict.speak
        sent = await channels.transmit(
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
        await store.record_outcome(
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
        await deliberation.settle(
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
