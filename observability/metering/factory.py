"""The configured set of meters, built by name from settings (none, one or several)."""

from __future__ import annotations

import logging

from observability.metering import sdk_metrics
from observability.metering.event_log import EventLogMeter
from observability.metering.hub import UsageMeter
from observability.metering.ledger import LedgerMeter
from observability.metering.prometheus import PrometheusMeter
from schemas.settings import MeterName, Settings
from store.db import Database

log = logging.getLogger(__name__)


def build_meter(name: MeterName, settings: Settings, db: Database) -> UsageMeter:
    """The meter called ``name``, configured from ``settings``."""
    if name == "ledger":
        return LedgerMeter(db)
    if name == "prometheus":
        # The worker installed the SDK's buffered runtime first: its metrics share the endpoint.
        sdk = sdk_metrics.installed()
        return PrometheusMeter(
            host=settings.metrics_host,
            port=settings.metrics_port,
            collectors=[sdk] if sdk is not None else [],
        )
    return EventLogMeter(settings.usage_event_log)


def build_meters(settings: Settings, db: Database) -> list[UsageMeter]:
    """Every meter ``settings.meters`` names; one that cannot be built is left out, not fatal."""
    meters: list[UsageMeter] = []
    for name in dict.fromkeys(settings.meters):
        try:
            meters.append(build_meter(name, settings, db))
        except Exception:
            log.error("meter %s could not be built; running without it", name, exc_info=True)
    return meters
