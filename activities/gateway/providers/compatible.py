"""Any OpenAI-compatible server, in the dialect it speaks for replies held to a schema.

Servers that speak OpenAI's Chat Completions protocol differ where Persyn leans on it hardest:
a reply held to a JSON Schema (critique, emotion, memory formation, people extraction). Three
forms are in use:

- ``json_schema``: OpenAI's own ``{"type": "json_schema", "json_schema": {...}}``, which vLLM,
  LM Studio, Ollama (0.5 and later) and llama.cpp's ``llama-server`` accept;
- ``json_object``: ``{"type": "json_object", "schema": ...}``, the form of llama-cpp-python's
  server, which refuses the first ("Input should be 'text' or 'json_object'");
- ``prompt``: no ``response_format`` at all; the schema is stated in the system message and the
  reply parsed as any other (the gateway's parser already strips code fences and prose).

With ``auto`` (the default) the provider starts at ``json_schema`` and steps down each time the
server refuses the form itself (an error that names ``response_format``, ``json_schema`` or
``json_object``), then keeps the first form the server accepted for the life of the process.
Every other failure is raised as it came, so retries and fallbacks stay the gateway's.

A server on this machine mostly answers one call at a time, so it may be given lanes
(:mod:`activities.gateway.lanes`): a reply then goes before memory formation and the other
background work, as on the built-in server.
"""

from __future__ import annotations

import json
import logging
from enum import StrEnum
from typing import Any

from activities.gateway.base import DeltaCallback
from activities.gateway.lanes import ModelLanes, is_foreground
from activities.gateway.providers.openai import OpenAIProvider
from contract.provider_errors import ProviderInvalidRequestError, ProviderServerError
from schemas.models import ModelBinding, ModelRequest, ModelResponse, ProviderName, Sampling

log = logging.getLogger(__name__)


class StructuredDialect(StrEnum):
    """How a server is asked for a reply that fits a JSON Schema."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"
    PROMPT = "prompt"


DIALECTS = tuple(StructuredDialect)
"""The order ``auto`` tries them in: the most exact first."""

REFUSAL_MARKERS = ("response_format", "json_schema", "json_object")
"""Words in a server's error that show it refused the form of the request, not its content."""

PROMPT_INSTRUCTION = (
    "Reply with one JSON object and nothing else: no prose, no code fence. "
    "It must match this JSON Schema:\n{schema}"
)


def refused_form(err: Exception) -> bool:
    """Whether ``err`` is a server refusing the structured-reply form it was sent."""
    if not isinstance(err, ProviderInvalidRequestError | ProviderServerError):
        return False
    message = str(err).lower()
    return any(marker in message for marker in REFUSAL_MARKERS)


def local_sampling(sampling: Sampling) -> dict[str, Any]:
    """The sampling parameters beyond OpenAI's that servers on one's own machine read.

    Only those the plan sets (the small-model plan does): llama.cpp, LM Studio and vLLM read
    ``top_k`` and ``min_p``, llama.cpp and LM Studio ``repeat_penalty``; Ollama and vLLM pass
    over what they do not know.
    """
    extra = {"repeat_penalty": sampling.repeat_penalty, "top_k": sampling.top_k}
    extra["min_p"] = sampling.min_p
    return {key: value for key, value in extra.items() if value is not None}


class CompatibleProvider(OpenAIProvider):
    """An OpenAI-compatible server at ``base_url``, asked for structure in its own dialect."""

    def __init__(
        self,
        api_key: str,
        base_url: str,
        timeout_seconds: float,
        dialect: StructuredDialect | None = None,
        lanes: ModelLanes | None = None,
    ) -> None:
        super().__init__(
            api_key=api_key,
            base_url=base_url,
            timeout_seconds=timeout_seconds,
            provider=ProviderName.OPENAI_COMPATIBLE,
        )
        self._fixed = dialect is not None
        self._dialect = dialect or StructuredDialect.JSON_SCHEMA
        self.lanes = lanes
        """Replies before background work, for a server on this machine (one call at a time)."""

    @property
    def dialect(self) -> StructuredDialect:
        """The form structured calls use now (learned, with ``auto``)."""
        return self._dialect

    async def complete(
        self,
        request: ModelRequest,
        binding: ModelBinding,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> ModelResponse:
        """Run one exchange; a structured one in the server's dialect, learned on first refusal.

        Raises:
            ProviderError: A classified failure (a refused form only once every form was).
        """

        async def call() -> ModelResponse:
            return await self._complete(request, binding, on_delta)

        if self.lanes is None:
            return await call()
        return await self.lanes.run(call, foreground=is_foreground(request.task))

    async def _complete(
        self, request: ModelRequest, binding: ModelBinding, on_delta: DeltaCallback | None
    ) -> ModelResponse:
        if request.response_schema is None:
            return await super().complete(request, binding, on_delta=on_delta)
        while True:
            dialect = self._dialect
            params = self._structured_params(request, binding, dialect)
            try:
                return await self._exchange(params, request, binding, on_delta)
            except (ProviderInvalidRequestError, ProviderServerError) as err:
                lower = self._step_down(dialect)
                if self._fixed or lower is None or not refused_form(err):
                    raise
                log.warning(
                    "%s refused structured replies as %s; asking as %s from now on (%s)",
                    self.name,
                    dialect.value,
                    lower.value,
                    str(err)[:200],
                )
                if self._dialect is dialect:  # a concurrent call may have stepped down already
                    self._dialect = lower

    def _streams(self, on_delta: DeltaCallback | None) -> bool:
        # With lanes, always: a server notices a caller that gave up (a background call
        # pre-empted by a reply) only between streamed chunks.
        return self.lanes is not None or on_delta is not None

    def _extra_body(self, sampling: Sampling) -> dict[str, Any]:
        # Without them SmolLM2 served this way began copying lines of its own context
        # ("Bench: Hello.") within 25 replies.
        return local_sampling(sampling)

    def _step_down(self, dialect: StructuredDialect) -> StructuredDialect | None:
        index = DIALECTS.index(dialect)
        return DIALECTS[index + 1] if index + 1 < len(DIALECTS) else None

    def _structured_params(
        self, request: ModelRequest, binding: ModelBinding, dialect: StructuredDialect
    ) -> dict[str, Any]:
        assert request.response_schema is not None
        schema = request.response_schema
        if dialect is StructuredDialect.PROMPT:
            instruction = PROMPT_INSTRUCTION.format(schema=json.dumps(schema, ensure_ascii=False))
            system = f"{request.system}\n\n{instruction}" if request.system else instruction
            request = request.model_copy(update={"system": system})
        params = self._params(request, binding)
        params.pop("response_format", None)
        if dialect is StructuredDialect.JSON_OBJECT:
            params["response_format"] = {"type": "json_object", "schema": schema}
        elif dialect is StructuredDialect.JSON_SCHEMA:
            params["response_format"] = super()._response_format(schema)
        return params
