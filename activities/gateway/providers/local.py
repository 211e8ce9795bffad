"""The local model: llama.cpp's OpenAI-compatible server, run beside the worker, never in it.

No key, no network: the default when nothing is configured. ``persyn up`` starts and
supervises ``python -m llama_cpp.server`` (:mod:`workers.model_server`); this provider is an
OpenAI-compatible client of it, so a native crash of llama.cpp (a grammar its compiler
rejects) fails one call with a classified, retryable :class:`ProviderServerError` while the
worker lives on. What differs from any OpenAI-compatible endpoint is llama.cpp's dialect:

- a schema goes as ``{"type": "json_object", "schema": ...}``, which llama.cpp compiles to a
  grammar (the gateway clamps it first: :mod:`activities.gateway.schema_limits`);
- llama.cpp's own sampling parameters (``repeat_penalty``, ``top_k``, ``min_p``) ride along;
- no tools are offered (the call plan says so), and a tool exchange that reaches the model
  anyway (a fallback binding) is flattened into plain turns it can read;
- every call is streamed, so the server stops work for a caller that gave up, and a streamed
  reply carries no usage, so its tokens are estimated from its length;
- the server answers one call at a time, so calls pass two lanes first
  (:mod:`activities.gateway.lanes`): a reply goes before background work, and pre-empts it.
"""

from __future__ import annotations

from typing import Any

import openai

from activities.gateway.base import DeltaCallback
from activities.gateway.lanes import ModelLanes, is_foreground
from activities.gateway.providers.compatible import local_sampling
from activities.gateway.providers.openai import OpenAIProvider
from contract.provider_errors import ProviderServerError
from schemas.models import (
    ModelBinding,
    ModelRequest,
    ModelResponse,
    ProviderName,
    Sampling,
    TokenUsage,
)

CHARS_PER_TOKEN = 4
"""Rough size of a token in English text, for usage the server does not report."""


class LocalProvider(OpenAIProvider):
    """The local model server at ``base_url`` (the OpenAI API root, ending in ``/v1``)."""

    def __init__(self, base_url: str, timeout_seconds: float) -> None:
        super().__init__(
            api_key="not-needed",
            base_url=base_url,
            timeout_seconds=timeout_seconds,
            provider=ProviderName.LOCAL,
        )
        self._base_url = base_url
        self.lanes = ModelLanes()
        """Replies before background work on the one model (``activities.gateway.lanes``)."""

    async def complete(
        self,
        request: ModelRequest,
        binding: ModelBinding,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> ModelResponse:
        """Run one exchange on the local model server.

        Raises:
            ProviderError: A classified failure; a server that is down, crashed or dropped
                the connection is a retryable :class:`ProviderServerError`.
        """

        async def call() -> ModelResponse:
            return await super(LocalProvider, self).complete(request, binding, on_delta=on_delta)

        try:
            response = await self.lanes.run(call, foreground=is_foreground(request.task))
        except ProviderServerError as err:
            if isinstance(err.__cause__, openai.APIConnectionError):
                raise ProviderServerError(
                    f"local model server at {self._base_url} did not answer "
                    f"({err.__cause__}); the stack restarts it, or run `persyn up`"
                ) from err.__cause__
            raise
        if response.usage.input_tokens or response.usage.output_tokens:
            return response
        return response.model_copy(update={"usage": _estimated_usage(request, response.text)})

    def _streams(self, on_delta: DeltaCallback | None) -> bool:
        # Always: llama-cpp-python's server notices a caller that gave up (a timeout, a
        # cancelled activity) only between streamed chunks; unstreamed, an abandoned call keeps
        # the one model busy to its end while the retry and every reply queue behind it.
        return True

    def _messages(self, request: ModelRequest) -> list[Any]:
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for m in request.messages:
            if m.role == "tool":
                prefix = "Tool error" if m.is_error else "Tool result"
                messages.append({"role": "user", "content": f"{prefix}: {m.content}"})
            else:
                messages.append({"role": m.role, "content": m.content})
        return messages

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        # llama-cpp-python's server knows only json_object (with an optional schema).
        return {"type": "json_object", "schema": schema}

    def _extra_body(self, sampling: Sampling) -> dict[str, Any]:
        return local_sampling(sampling)


def _estimated_usage(request: ModelRequest, text: str) -> TokenUsage:
    prompt = len(request.system) + sum(len(m.content) for m in request.messages)
    return TokenUsage(
        input_tokens=max(prompt // CHARS_PER_TOKEN, 1),
        output_tokens=len(text) // CHARS_PER_TOKEN + (1 if text else 0),
    )
