"""The encoder contract: text to vectors, local infrastructure (spec §6).

Implementations live beside this module and are chosen by name from settings. An unavailable
encoder raises :class:`EncoderUnavailableError`; callers degrade to lexical search.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from store.embedding import EmbeddingUnavailableError

log = logging.getLogger(__name__)


class EncoderUnavailableError(EmbeddingUnavailableError):
    """The encoder cannot encode right now (service down, model missing)."""


class Encoder(Protocol):
    """Turns texts into unit-length vectors of a fixed dimensionality."""

    name: str
    """Model identity recorded with every stored vector (``memory_records.embed_model``)."""

    dimensions: int

    async def encode(self, texts: list[str]) -> list[list[float]]:
        """Encode ``texts`` (one vector each, L2-normalised); never blocks the event loop.

        Raises:
            EncoderUnavailableError: The encoder cannot answer.
        """
        ...

    async def aclose(self) -> None:
        """Release sessions and connections."""
        ...


async def encode_or_none(
    encoder: Encoder | None, text: str, *, timeout_s: float
) -> list[float] | None:
    """``text``'s vector, or ``None`` when there is no encoder or it fails or is slow.

    For writes that store a record whatever happens: a record without a vector is filled in
    later by maintenance (``memory.index``), so the encoder never holds a memory back.
    """
    if encoder is None:
        return None
    try:
        async with asyncio.timeout(timeout_s):
            vectors = await encoder.encode([text])
    except Exception as err:  # an optional subsystem: it fails soft
        log.info("encoder unavailable, storing without a vector: %s", err)
        return None
    return vectors[0] if vectors else None
