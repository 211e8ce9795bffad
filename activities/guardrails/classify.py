"""Hostility scored by a model: the ``classify`` task through the gateway, when a rule asks.

The lexical score (:mod:`activities.guardrails.hostility`) misses sarcasm and politely worded
threats; a rule with ``classify: true`` asks the model instead, once per evaluation for every
turn the rules read. The messages reach the model fenced (they are other people's words), and
any failure (provider, unreadable reply, a count that does not match) leaves the lexical score
in place: a guardrail never fails for want of a model.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import Field

from activities.context.fencing import DIALOG, fence
from activities.gateway.gateway import ModelGateway
from activities.guardrails.history import Turn
from activities.memory.formation.calls import complete_json
from activities.prompts import load
from schemas.events import Wire
from schemas.models import ChatMessage, ModelRequest, TaskType

log = logging.getLogger(__name__)

MAX_CHARS = 1500
"""Each message is cut to this many characters: hostility shows early."""


class HostilityScores(Wire):
    """The model's reply: one score per message, in order."""

    scores: list[float] = Field(max_length=50)


def hostility_request(turns: Sequence[Turn]) -> ModelRequest:
    """The classify request rating ``turns``, each fenced as a person's words."""
    body = "\n\n".join(
        f"Message {number}:\n{fence(turn.text[:MAX_CHARS], DIALOG)}"
        for number, turn in enumerate(turns, start=1)
    )
    return ModelRequest(
        task=TaskType.CLASSIFY,
        system=load("guardrails/hostility.md"),
        messages=[ChatMessage(role="user", content=body)],
        response_schema={
            "type": "object",
            "properties": {
                "scores": {
                    "type": "array",
                    "items": {"type": "number", "minimum": 0, "maximum": 1},
                    "maxItems": 50,
                }
            },
            "required": ["scores"],
        },
        temperature=0,
    )


async def model_hostility(gateway: ModelGateway, turns: Sequence[Turn]) -> dict[str, float]:
    """Each turn's hostility as the model rates it; empty when the model cannot say."""
    if not turns:
        return {}
    try:
        reply = await complete_json(gateway, hostility_request(turns), HostilityScores)
    except Exception as err:
        log.warning("hostility by model unavailable; the lexical score stands: %s", err)
        return {}
    if len(reply.scores) != len(turns):
        log.warning(
            "hostility by model: %d scores for %d turns; ignored", len(reply.scores), len(turns)
        )
        return {}
    return {
        turn.id: min(max(score, 0.0), 1.0) for turn, score in zip(turns, reply.scores, strict=True)
    }
