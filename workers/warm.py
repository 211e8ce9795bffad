"""Warming what the first message would otherwise wait for, as soon as the worker serves.

After ``persyn up`` the first message paid for everything loaded on first use: the encoder's
model read from disk and its first inference, and, on a model served on this machine, the
weights paged in and the first prompt read from nothing. Here both are touched once, in the
background, while the person is still typing: the encoder encodes one short text, and the
reply's model, when it runs on this machine (it costs nothing), answers a one-token request
at background priority, so a message that does arrive first goes before it. Nothing here is
metered or stored, and a failure is only logged: the first message then loads what it needs,
as before.
"""

from __future__ import annotations

import asyncio
import logging

from activities.gateway.gateway import ModelGateway
from activities.memory.encoder import Encoder
from schemas.models import ChatMessage, ModelRequest, ProviderName, TaskType

log = logging.getLogger(__name__)

ON_THIS_MACHINE = frozenset({ProviderName.LOCAL, ProviderName.OPENAI_COMPATIBLE})
"""Providers whose calls cost nothing: the built-in server and a server of the user's own."""

WARM_TIMEOUT_S = 120.0
"""A warm-up still running after this long is given up (the first message loads instead)."""

_HELLO = ModelRequest(
    task=TaskType.CLASSIFY,  # background priority: a waiting reply goes first
    system="Answer with one word.",
    messages=[ChatMessage(role="user", content="Hello.")],
    max_output_tokens=1,
)


async def warm(gateway: ModelGateway, encoder: Encoder | None) -> list[str]:
    """Touch the encoder and the reply's local model once; what was warmed, by name."""
    steps = {"encoder": _encoder(encoder), "model": _model(gateway)}
    results = await asyncio.gather(
        *(asyncio.wait_for(step, WARM_TIMEOUT_S) for step in steps.values()),
        return_exceptions=True,
    )
    warmed: list[str] = []
    for name, result in zip(steps, results, strict=True):
        if isinstance(result, BaseException):
            log.info("warming the %s failed (%s); the first message loads it", name, result)
        elif result:
            warmed.append(name)
    if warmed:
        log.info("warmed before the first message: %s", ", ".join(warmed))
    return warmed


async def _encoder(encoder: Encoder | None) -> bool:
    if encoder is None:
        return False
    await encoder.encode(["Hello."])
    return True


async def _model(gateway: ModelGateway) -> bool:
    reply = gateway.registry.binding(TaskType.RESPOND)
    if reply.provider not in ON_THIS_MACHINE:
        return False  # a hosted model is warm already, and a call would cost money
    background = gateway.binding(_HELLO)
    if (background.provider, background.model) != (reply.provider, reply.model):
        return False  # the background task's model is not the reply's: warming it helps none
    await gateway.complete(_HELLO, metered=False)
    return True
