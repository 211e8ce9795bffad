"""Schema-constrained model calls through the gateway, and reading their replies."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.context import fencing
from activities.gateway.errors import to_application_error
from activities.gateway.gateway import ModelGateway
from activities.gateway.repetition import cut_repetition
from activities.heartbeating import heartbeating
from activities.memory.formation.prompts import NOT_QUOTED
from activities.prompts import load
from contract.provider_errors import ProviderError
from schemas.memory import Emotion
from schemas.memory_formation import EmotionDistribution
from schemas.models import CallPlan, ModelRequest, StagePlan, TaskType

Reply = TypeVar("Reply", bound=BaseModel)

MAX_TAGS = 8
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_NOT_WORD = re.compile(r"[^\w]+")
PROMPT_WORDING = ("memory/classification.md", "memory/judged.md")
"""The prompt texts whose wording a classify reply's tags must not copy."""


def call_plan(gateway: ModelGateway, task: TaskType) -> CallPlan:
    """The call plan of the provider serving ``task``."""
    return gateway.registry.plan(gateway.registry.binding(task).provider)


def stage_plan(gateway: ModelGateway, task: TaskType) -> StagePlan:
    """How the provider serving ``task`` runs it (its formation prompt budget among the rest)."""
    return call_plan(gateway, task).stage(task)


async def complete_json(gateway: ModelGateway, request: ModelRequest, reply: type[Reply]) -> Reply:
    """Run ``request`` and read its reply as ``reply``.

    Raises:
        ApplicationError: A classified provider failure (retried when transient), or a reply
            that does not fit the schema (retried once).
    """
    try:
        async with heartbeating():
            response = await gateway.complete(request)
    except ProviderError as err:
        raise to_application_error(err) from err
    try:
        read = read_reply(response.text, reply)
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
    return uncycled(read) if call_plan(gateway, request.task).cut_repetition else read


def uncycled(reply: Reply) -> Reply:
    """``reply`` with each text field cut before its first repeated sentence.

    A small model can loop inside a JSON string as it does in prose: a summary came back as
    one sentence eight times. The first occurrence is kept, so a field never empties.
    """
    update = {
        name: cut_repetition(value)
        for name, value in reply
        if isinstance(value, str) and cut_repetition(value) != value
    }
    return reply.model_copy(update=update) if update else reply


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


def _words(text: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


@cache
def _prompt_wording() -> str:
    """The wording of the classify prompt and its fence labels, as :func:`_words` sees it."""
    labels = [
        f"{p.source} {p.origin} {p.trust}"
        for p in (
            fencing.DIALOG,
            fencing.OWN_WORDS,
            fencing.IMPORTED,
            fencing.FORMED,
            fencing.MEMORY,
            fencing.CHANNEL,
        )
    ]
    texts = [load(name) for name in PROMPT_WORDING] + labels + [NOT_QUOTED]
    return " | ".join(_words(text) for text in texts)


def echoes_prompt(tag: str) -> bool:
    """Whether ``tag`` is a fragment of the prompt's own wording, not a topic.

    A small model copied a fence label ("your own words: they may quote,") as a tag. A tag of
    two words or more that starts at a word of the prompt's wording and runs on within it is
    such a fragment (its last word may be cut short); one word alone may be a real topic.
    """
    words = _words(tag)
    return " " in words and f" {words}" in f" {_prompt_wording()}"


def clean_tags(tags: list[str]) -> list[str]:
    """Lower-case, trimmed, de-duplicated topic tags, at most :data:`MAX_TAGS` of them.

    Fragments of the prompt's own wording (:func:`echoes_prompt`) are dropped.
    """
    seen: list[str] = []
    for tag in tags:
        cleaned = " ".join(tag.lower().split())[:64]
        if cleaned and cleaned not in seen and not echoes_prompt(cleaned):
            seen.append(cleaned)
    return seen[:MAX_TAGS]
