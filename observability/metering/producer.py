"""Usage records for billable work that bypasses the model gateway (Appendix C).

Image generation is priced per image and a delegated agent reports its own spend; neither is
a token-priced call through the gateway. Their producers build the same :class:`UsageRecord`
here, with the attribution of the running activity and an already-resolved cost, and emit it
to the same meters, so per-channel and per-conversation tallies include it automatically.
"""

from __future__ import annotations

from datetime import UTC, datetime

from contract import attribution
from observability.metering.hub import MeterHub
from observability.metering.pricing import unit_cost
from schemas.ids import new_ulid
from schemas.models import ModelTier, UsageRecord
from schemas.pricing import PriceTable


def work_record(
    *,
    stage: str,
    provider: str,
    model: str,
    units: int = 0,
    variant: str | None = None,
    prices: PriceTable | None = None,
    cost_usd: float | None = None,
    input_tokens: int = 0,
    output_tokens: int = 0,
    tier: ModelTier = ModelTier.STRONG,
    record_id: str | None = None,
    latency_ms: float = 0.0,
) -> UsageRecord:
    """A usage record for work done outside the gateway, attributed to the running activity.

    Args:
        stage: What the work served ("image", "delegate", ...).
        provider: Who did it.
        model: The model or service identity.
        units: Non-token units produced (images, ...); counted even when unpriced.
        variant: Which unit price applies (e.g. "1024x1024/high"); "default" if omitted.
        prices: The price table used when ``cost_usd`` is not given.
        cost_usd: A cost the producer already knows (a delegated agent's own report).
        input_tokens: Tokens the work consumed, if it reports any.
        output_tokens: Tokens the work produced, if it reports any.
        tier: Cheap/fast or strong, for the cost dashboards.
        record_id: A stable ID when the producer may report the same work twice (e.g. derived
            from the activity ID); a fresh ULID otherwise.
        latency_ms: How long the work took.
    """
    if cost_usd is None and prices is not None and units:
        cost_usd = unit_cost(prices, model=model, units=units, variant=variant)
    who = attribution.current()
    return UsageRecord(
        record_id=record_id or new_ulid(),
        stage=stage,
        provider=provider,
        model=model,
        tier=tier,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        units=units,
        cost_usd=cost_usd,
        agent=who.agent,
        channel=who.channel,
        conversation=who.conversation,
        activation=who.activation,
        occurred_at=datetime.now(UTC),
        latency_ms=latency_ms,
    )


def emit_work(meters: MeterHub | None, record: UsageRecord) -> None:
    """Hand ``record`` to the meters; never raises, never waits (like the gateway's emission)."""
    if meters is not None:
        meters.emit(record)
