"""The encoder of a deployment that runs none: every call is unavailable, search stays lexical."""

from __future__ import annotations

from activities.memory.encoder import EncoderUnavailableError


class NullEncoder:
    """Always unavailable (``encoder = "none"``); callers degrade to lexical search.

    Args:
        dimensions: The configured vector size (kept so dimension checks still make sense).
    """

    name = "none"

    def __init__(self, *, dimensions: int = 384) -> None:
        self.dimensions = dimensions

    async def encode(self, texts: list[str]) -> list[list[float]]:
        """Never encodes.

        Raises:
            EncoderUnavailableError: Always.
        """
        raise EncoderUnavailableError("no encoder is configured (PERSYN_ENCODER=none)")

    async def aclose(self) -> None:
        """Nothing to release."""
