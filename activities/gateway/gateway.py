"""The model gateway: the single chokepoint every model call passes through.

It resolves a task type to a provider and model, shapes the request by that provider's call
plan (length caps, sampling, schemas clamped for grammar-constrained models, tools or not),
bounds the call with a timeout, forwards token deltas to a sink best effort (never showing a
sentence the plan's repetition cut removes: :mod:`activities.gateway.tidy`), and emits exactly
one usage record per completed call with the attribution bound to the running activity (never
passed by call sites).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from datetime import UTC, datetime

from activities.gateway.base import DeltaCallback, Provider
from activities.gateway.plans import shaped
from activities.gateway.registry import ModelRegistry
from activities.gateway.tidy import free_text
from contract import attribution
from contract.provider_errors import ProviderTimeoutError, ProviderUnavailableError
from observability.metering import provider_errors
from observability.metering.hub import MeterHub
from observability.metering.pricing import price
from observability.model_call import ModelCallSpan
from observability.tracing import Tracing
from schemas.ids import new_ulid
from schemas.models import (
    ModelBinding,
    ModelRequest,
    ModelResponse,
    ProviderName,
    TaskType,
    UsageRecord,
)
from schemas.pricing import PriceTable

log = logging.getLogger(__name__)

_DELTA_TIMEOUT_S = 0.25


class _BestEffortSink:
    """Wraps a delta callback so a slow or failing sink can never hurt generation."""

    def __init__(self, callback: DeltaCallback) -> None:
        self._callback = callback
        self._broken = False

    async def __call__(self, text: str) -> None:
        if self._broken:
            return
        try:
            await asyncio.wait_for(self._callback(text), _DELTA_TIMEOUT_S)
        except Exception:
            # One failure disables the sink for the rest of the call: presentation only.
            self._broken = True
            log.info("token sink failed; streaming stops for this call", exc_info=True)


class ModelGateway:
    """Runs model calls for every activity that needs one."""

    def __init__(
        self,
        registry: ModelRegistry,
        providers: Mapping[ProviderName, Provider],
        *,
        meters: MeterHub | None = None,
        timeout_seconds: float = 120.0,
        prices: PriceTable | None = None,
        tracing: Tracing | None = None,
    ) -> None:
        self.registry = registry
        self._providers = dict(providers)
        self._meters = meters
        self._timeout = timeout_seconds
        self._prices = prices
        self._tracing = tracing

    def binding(self, request: ModelRequest) -> ModelBinding:
        """The model that will serve ``request``."""
        return self.registry.binding(request.task)

    def runs(self, task: TaskType) -> bool:
        """Whether the call plan of the provider serving ``task`` runs that stage at all."""
        return self.registry.runs(task)

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_delta: DeltaCallback | None = None,
        metered: bool = True,
    ) -> ModelResponse:
        """Run one exchange on the model bound to ``request.task``.

        ``metered=False`` leaves the call out of usage (the worker's own warm-up call).

        Raises:
            ProviderError: A classified failure (see :mod:`contract.provider_errors`).
        """
        binding = self.registry.binding(request.task)
        provider = self._providers.get(binding.provider)
        if provider is None:
            raise ProviderUnavailableError(
                f"no {binding.provider.value} provider is configured for {request.task.value}"
            )
        plan = self.registry.plan(binding.provider)
        request = shaped(request, plan)
        sink = _BestEffortSink(on_delta) if on_delta is not None else None
        # Observability hook: the model-call span (Appendix D); a no-op with tracing off.
        with (
            ModelCallSpan(self._tracing, request, binding) as span,
            provider_errors.counted(provider=binding.provider.value, stage=request.task.value),
        ):
            started = time.perf_counter()
            try:
                async with asyncio.timeout(self._timeout):
                    if request.response_schema is None:
                        response = await free_text(provider, request, binding, plan, sink)
                    else:
                        response = await provider.complete(request, binding)
            except TimeoutError:
                raise ProviderTimeoutError(
                    f"{binding.provider.value} did not answer within {self._timeout:g}s"
                ) from None
            latency = (time.perf_counter() - started) * 1000
            record = self._emit(request, binding, response, latency) if metered else None
            span.finish(response, latency, record)
        return response.model_copy(update={"latency_ms": latency})

    def _emit(
        self, request: ModelRequest, binding: ModelBinding, response: ModelResponse, latency: float
    ) -> UsageRecord | None:
        if self._meters is None:
            return None
        try:
            who = attribution.current()
            record = UsageRecord(
                record_id=new_ulid(),
                stage=request.task.value,
                provider=binding.provider.value,
                model=response.model,
                tier=binding.tier,
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
                cached_read_tokens=response.usage.cached_read_tokens,
                cached_write_tokens=response.usage.cached_write_tokens,
                agent=who.agent,
                channel=who.channel,
                conversation=who.conversation,
                activation=who.activation,
                occurred_at=datetime.now(UTC),
                latency_ms=latency,
            )
            # Observability hook: cost is derived once, here, and travels on the record.
            if self._prices is not None:
                record = price(record, self._prices)
            self._meters.emit(record)
        except Exception:
            log.warning("usage record not emitted", exc_info=True)
            return None
        return record

    async def aclose(self) -> None:
        """Close every provider."""
        for provider in self._providers.values():
            await provider.aclose()
