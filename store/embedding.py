"""What the store's own writers need from a text encoder (the importer embeds as it stores).

The encoders live in ``activities/memory`` and satisfy :class:`TurnEncoder` structurally; their
unavailability error derives from :class:`EmbeddingUnavailableError`. The store depends on this
contract, never on the activities above it.
"""

from __future__ import annotations

from typing import Protocol


class EmbeddingUnavailableError(RuntimeError):
    """The encoder cannot encode right now (service down, model missing)."""


class TurnEncoder(Protocol):
    """Turns texts into unit-length vectors; raises :class:`EmbeddingUnavailableError`."""

    name: str
    """Model identity recorded with every stored vector."""

    async def encode(self, texts: list[str]) -> list[list[float]]:
        """Encode ``texts``, one vector each."""
        ...
