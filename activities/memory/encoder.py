"""The encoder contract: text to vectors, local infrastructure (spec §6).

Implementations live beside this module and are chosen by name from settings. An unavailable
encoder raises :class:`EncoderUnavailableError`; callers degrade to lexical search.
"""

from __future__ import annotations

from typing import Protocol

from store.embedding import EmbeddingUnavailableError


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
