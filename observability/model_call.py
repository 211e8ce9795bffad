"""The model-call span, opened by the gateway around every provider call (Appendix D).

It records the stage, the model, the tokens, the latency and the cost; under the ``full``
content policy also the system instruction, the messages, the offered tool definitions and
the reply (OpenTelemetry GenAI attribute names where one exists). It nests under the current
span (the activity's) or, failing that, under the turn of the bound activation. Tracing never
changes the call: every step swallows its own failure, and the provider's exception passes
through unchanged.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from contract import attribution
from observability.tracing import Tracing, as_json, end_span, parent_context
from schemas.models import ChatMessage, ModelBinding, ModelRequest, ModelResponse, UsageRecord

log = logging.getLogger(__name__)


def _message(message: ChatMessage) -> dict[str, Any]:
    """A message as a span records it: a picture by its type and size, never its bytes."""
    dumped = message.model_dump(exclude={"images"})  # as before pictures, when it has none
    if message.images:
        dumped["images"] = [
            {"media_type": image.media_type, "base64_chars": len(image.data)}
            for image in message.images
        ]
    return dumped


def _request_content(request: ModelRequest) -> dict[str, str]:
    content = {
        "gen_ai.system_instructions": request.system,
        "gen_ai.input.messages": as_json([_message(m) for m in request.messages]),
    }
    # Tool definitions arrive with the tool work; record them whenever a request offers some.
    tools = getattr(request, "tools", None)
    if tools:
        content["gen_ai.tool.definitions"] = as_json(tools)
    if request.response_schema is not None:
        content["persyn.response_schema"] = as_json(request.response_schema)
    return content


def _start_attributes(request: ModelRequest, binding: ModelBinding) -> dict[str, Any]:
    who = attribution.current()
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": binding.provider.value,
        "gen_ai.request.model": binding.model,
        "gen_ai.request.max_tokens": request.max_output_tokens or binding.max_output_tokens,
        "persyn.stage": request.task.value,
        "persyn.tier": binding.tier.value,
    }
    if request.temperature is not None:
        attributes["gen_ai.request.temperature"] = request.temperature
    for key, value in who.model_dump(exclude_none=True).items():
        attributes[f"persyn.{key}"] = value
    return attributes


class ModelCallSpan:
    """A context manager around one provider call; a no-op when tracing is off."""

    def __init__(self, tracing: Tracing | None, request: ModelRequest, binding: ModelBinding):
        self._tracing = tracing
        self._span: trace.Span | None = None
        if tracing is None:
            return
        try:
            attributes = _start_attributes(request, binding)
            if tracing.full:
                attributes |= _request_content(request)
            self._span = tracing.tracer.start_span(
                f"model:{request.task.value}",
                context=parent_context(),
                kind=SpanKind.CLIENT,
                attributes=attributes,
            )
        except Exception:
            log.debug("model-call span not started", exc_info=True)

    def finish(
        self, response: ModelResponse, latency_ms: float, record: UsageRecord | None = None
    ) -> None:
        """Record what the call returned and what it cost."""
        if self._span is None or self._tracing is None:
            return
        try:
            usage = response.usage
            attributes: dict[str, Any] = {
                "gen_ai.response.model": response.model,
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "persyn.tokens.cached_read": usage.cached_read_tokens,
                "persyn.tokens.cached_write": usage.cached_write_tokens,
                "persyn.latency_ms": latency_ms,
            }
            if response.finish_reason:
                attributes["gen_ai.response.finish_reasons"] = [response.finish_reason]
            if record is not None:
                attributes["persyn.record_id"] = record.record_id
                if record.cost_usd is not None:
                    attributes["persyn.cost_usd"] = record.cost_usd
            if self._tracing.full:
                attributes["gen_ai.output.messages"] = as_json(
                    [{"role": "assistant", "content": response.text}]
                )
            self._span.set_attributes(attributes)
        except Exception:
            log.debug("model-call span not completed", exc_info=True)

    def __enter__(self) -> ModelCallSpan:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        full = self._tracing is not None and self._tracing.full
        end_span(self._span, error, full=full)
