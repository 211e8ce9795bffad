"""Turn metrics, recorded through the SDK's workflow meter.

The SDK records nothing while it replays, so a turn is counted once however often its history
is replayed. The worker serves these on its Prometheus endpoint beside the SDK's own metrics
(``observability/metering/sdk_metrics.py``); with no metrics configured the meter is a no-op.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from schemas.events import Outcome

TURNS = "persyn_turns"
"""Counter of finished turns, labelled ``outcome``, ``trigger`` and ``channel_kind``."""

TURN_LATENCY = "persyn_turn_latency"
"""Histogram of seconds from an activation's start to its recorded outcome."""


def count_turn(
    outcome: Outcome, *, trigger: str, channel_kind: str, latency: timedelta | None = None
) -> None:
    """Count one finished turn (and its latency, when the activation itself measured it)."""
    attributes = {"outcome": outcome.value, "trigger": trigger, "channel_kind": channel_kind}
    meter = workflow.metric_meter()
    meter.create_counter(
        TURNS, "Finished turns by outcome: spoke, silent, degraded (fallback reply) or failed."
    ).add(1, attributes)
    if latency is not None:
        meter.create_histogram_timedelta(
            TURN_LATENCY, "Time from an activation's start to its recorded outcome.", "s"
        ).record(latency, attributes)
