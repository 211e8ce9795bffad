"""The senses as the worker builds them from the configuration."""

from __future__ import annotations

from activities.gateway.gateway import ModelGateway
from activities.senses.perception import Senses
from activities.senses.transcribe import Transcriber, transcription_endpoint
from observability.metering.hub import MeterHub
from observability.metering.pricing import load_or_empty
from schemas.models import TaskType
from schemas.settings import Settings


def build_senses(settings: Settings, gateway: ModelGateway, meters: MeterHub | None) -> Senses:
    """Captions by the registry's ``caption`` binding, transcripts by the configured endpoint.

    The floor (the platform says it cannot perceive what was sent, without the model) is on
    where the responding plan confirms without the model: the tiny model's.
    """
    endpoint = transcription_endpoint(settings)
    transcriber = None
    if endpoint is not None:
        transcriber = Transcriber(
            endpoint,
            meters=meters,
            prices=load_or_empty(settings.price_table),
            timeout_seconds=settings.senses.perceive_seconds,
        )
    registry = gateway.registry
    plan = registry.plan(registry.binding(TaskType.RESPOND).provider)
    return Senses(
        gateway,
        settings.senses,
        images=settings.home / "images",
        audio=settings.home / "audio",
        transcriber=transcriber,
        floor=plan.confirm_done,
    )
