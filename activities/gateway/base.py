"""The provider contract: one text-in/text-out exchange, optionally streamed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable

from schemas.models import ModelBinding, ModelRequest, ModelResponse

DeltaCallback = Callable[[str], Awaitable[None]]
"""Receives generated text incrementally; the gateway makes it best effort."""


class Provider(ABC):
    """A model provider. Implementations raise :mod:`contract.provider_errors` types only."""

    name: str

    @abstractmethod
    async def complete(
        self,
        request: ModelRequest,
        binding: ModelBinding,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> ModelResponse:
        """Run one exchange on ``binding.model``.

        Args:
            request: System instruction, messages and output constraints.
            binding: The model (and its limits) the registry chose for the task.
            on_delta: If given, called with each piece of text as it is generated. With
                ``request.response_schema`` the reply is a JSON document used whole, so it is
                never streamed and ``on_delta`` is not called.
        """

    async def aclose(self) -> None:
        """Release clients and connections."""
