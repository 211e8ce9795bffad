"""Schema-constrained model calls through the gateway, and reading their replies."""

from __future__ import annotations

import asyncio
import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.gateway.errors import ProviderError, to_application_error
from activities.gateway.gateway import ModelGateway
from schemas.memory import Emotion
from schemas.memory_formation import EmotionDistribution
from schemas.models import ModelRequest

Reply = TypeVar("Reply", bound=BaseModel)

HEARTBEAT_EVERY_S = 2.0
"""Heartbeat cadence while a model call runs, so a dead worker's call is retried promptly."""

MAX_TAGS = 8
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


async def _heartbeat() -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(HEARTBEAT_EVERY_S)


async def complete_json(gateway: ModelGateway, request: ModelRequest, reply: type[Reply]) -> Reply:
    """Run ``request`` and read its reply as ``reply``.

    Raises:
        ApplicationError: A classified provider failure (retried when transient), or a reply
            that does not fit the schema (retried once).
    """
    beating = asyncio.create_task(_heartbeat() if activity.in_activity() else asyncio.sleep(0))
    try:
        response = await gateway.complete(request)
    except ProviderError as err:
        raise to_application_error(err) from err
    finally:
        beating.cancel()
    try:
        return read_reply(response.text, reply)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "reply"
        # Tried once more (sampling may differ), then left for a later consolidation: with
        # schema-constrained output a model that misses twice will keep missing.
        raise ApplicationError(
            f"the {request.task.value} reply does not fit its schema ({where}: {first['msg']})",
            type="ModelReplyInvalid",
            non_retryable=activity.in_activity() and activity.info().attempt >= 2,
        ) from None


def read_reply(text: str, reply: type[Reply]) -> Reply:
    """Read a model's JSON reply as ``reply``, tolerating what small models emit around it.

    A code fence around the object is dropped. Raw line breaks and tabs inside strings are
    accepted (``strict=False``): a local model writes a multi-line summary that way, and
    refusing it would leave memories unformed on the default stack.

    Raises:
        ValidationError: The reply is not JSON, or does not fit ``reply``.
    """
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    body = fenced.group(1) if fenced else stripped
    try:
        decoded = json.loads(body, strict=False)
    except ValueError:
        # Not JSON at all: let pydantic say so in its own words.
        return reply.model_validate_json(body)
    return reply.model_validate(decoded)


def top_emotion(distribution: EmotionDistribution) -> tuple[Emotion, dict[str, float]]:
    """The most probable emotion and the normalised distribution (all zero reads as neutral)."""
    raw = {emotion.value: float(getattr(distribution, emotion.value)) for emotion in Emotion}
    total = sum(raw.values())
    if total <= 0:
        return Emotion.NEUTRAL, {key: float(key == Emotion.NEUTRAL.value) for key in raw}
    normalised = {key: round(value / total, 4) for key, value in raw.items()}
    # Ties go to the earlier category in Emotion's order, so the tag is reproducible.
    best = max(Emotion, key=lambda emotion: (raw[emotion.value], -list(Emotion).index(emotion)))
    return best, normalised


def clean_tags(tags: list[str]) -> list[str]:
    """Lower-case, trimmed, de-duplicated topic tags, at most :data:`MAX_TAGS` of them."""
    seen: list[str] = []
    for tag in tags:
        cleaned = " ".join(tag.lower().split())[:64]
        if cleaned and cleaned not in seen:
            seen.append(cleaned)
    return seen[:MAX_TAGS]
