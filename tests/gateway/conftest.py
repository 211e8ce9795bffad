"""A fake provider server per test, and request helpers shared by the adapter tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from schemas.models import ChatMessage, ModelBinding, ModelRequest, ProviderName, TaskType
from tests.fakes.provider_server import FakeProviderServer

SYSTEM = "You are Persyn Test, a careful agent. Answer briefly."
DIALOG = [
    ChatMessage(role="user", content="What is the capital of France?"),
    ChatMessage(role="assistant", content="Paris."),
    ChatMessage(role="user", content="And of Italy?"),
]


@pytest.fixture
def fake() -> Iterator[FakeProviderServer]:
    with FakeProviderServer(reply="Rome is the capital of Italy.") as server:
        yield server


def binding(provider: ProviderName, model: str = "fake-model") -> ModelBinding:
    return ModelBinding(provider=provider, model=model, context_window=8192, max_output_tokens=300)


def request(**overrides: Any) -> ModelRequest:
    values: dict[str, Any] = {"task": TaskType.RESPOND, "system": SYSTEM, "messages": DIALOG}
    values.update(overrides)
    return ModelRequest(**values)


class Deltas:
    """An on_delta callback that keeps what it receives."""

    def __init__(self) -> None:
        self.pieces: list[str] = []

    async def __call__(self, piece: str) -> None:
        self.pieces.append(piece)
