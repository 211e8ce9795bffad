"""The counter meter: running totals for a Prometheus scrape (Appendix C, burn rate).

Counters carry only low-cardinality labels (stage, model, tier, channel kind, agent). The
conversation, activation and record IDs would grow the label space without bound (a counter
never forgets a label set), so they stay on the event log and in the ledger. Each label also
has a cap on distinct values; past it, new values fold into ``other``.

Counters answer rate questions; exact totals come from the ledger (``persyn usage``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, start_http_server
from prometheus_client.registry import Collector

from observability.metering.recent import RecentIds
from schemas.models import UsageRecord

log = logging.getLogger(__name__)

LABELS = ("stage", "model", "tier", "channel_kind", "agent")
OTHER = "other"
_MAX_VALUE_CHARS = 64


@dataclass
class LabelLimits:
    """Most distinct values each label may take in one process before folding into ``other``."""

    per_label: dict[str, int] = field(
        default_factory=lambda: {
            "stage": 32,
            "model": 64,
            "tier": 4,
            "channel_kind": 32,
            "agent": 256,
        }
    )


class _BoundedLabels:
    """Maps raw label values to bounded ones."""

    def __init__(self, limits: LabelLimits) -> None:
        self._limits = limits.per_label
        self._seen: dict[str, set[str]] = {name: set() for name in LABELS}

    def value(self, name: str, raw: str | None) -> str:
        value = (raw or "none")[:_MAX_VALUE_CHARS]
        seen = self._seen[name]
        if value in seen:
            return value
        if len(seen) >= self._limits.get(name, 32):
            return OTHER
        seen.add(value)
        return value


def channel_kind(channel: str | None) -> str | None:
    """The service of a channel key (``terminal`` of ``terminal:tty``): few, unlike channels."""
    return channel.split(":", 1)[0] if channel else None


class PrometheusMeter:
    """Accumulates usage into counters on a private registry, served over HTTP."""

    name = "prometheus"

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = 9464,
        limits: LabelLimits | None = None,
        collectors: Sequence[Collector] = (),
    ) -> None:
        """Build the counters and, unless ``port`` is ``None``, start the scrape endpoint.

        Args:
            host: Interface the endpoint listens on.
            port: Its port (0: any free port; ``None``: no endpoint, e.g. in-process readers).
            limits: Caps on distinct label values.
            collectors: More metrics served on the same endpoint (the Temporal SDK's).
        """
        self.registry = CollectorRegistry()
        for collector in collectors:
            self.registry.register(collector)
        self._labels = _BoundedLabels(limits or LabelLimits())
        self._recent = RecentIds()
        self._records = Counter(
            "persyn_usage_records",
            "Completed billable units of work (model calls, images, delegated tasks).",
            LABELS,
            registry=self.registry,
        )
        self._tokens = Counter(
            "persyn_tokens",
            "Tokens consumed, by kind (input, output, cached_read, cached_write).",
            (*LABELS, "kind"),
            registry=self.registry,
        )
        self._units = Counter(
            "persyn_units",
            "Non-token units produced (e.g. images).",
            LABELS,
            registry=self.registry,
        )
        self._cost = Counter(
            "persyn_cost_usd",
            "Derived cost in USD of priced records.",
            LABELS,
            registry=self.registry,
        )
        self._unpriced = Counter(
            "persyn_unpriced_records",
            "Records with no price in the table: counted, not costed.",
            LABELS,
            registry=self.registry,
        )
        self._server: WSGIServer | None = None
        self.port: int | None = None
        if port is not None:
            self._serve(host, port)

    def _serve(self, host: str, port: int) -> None:
        try:
            self._server, _ = start_http_server(port, addr=host, registry=self.registry)
        except OSError as err:
            # Two workers on one host cannot share the port; counting goes on without it.
            log.warning("metrics endpoint %s:%s unavailable (%s); not served", host, port, err)
            return
        self.port = int(self._server.server_port)
        log.info("usage counters served at http://%s:%s/metrics", host, self.port)

    def observe(self, usage: UsageRecord) -> None:
        """Count one record (synchronously; the hub calls :meth:`record`)."""
        if not self._recent.first_time(usage.record_id):
            return
        raw = {
            "stage": usage.stage,
            "model": usage.model,
            "tier": usage.tier.value,
            "channel_kind": channel_kind(usage.channel),
            "agent": usage.agent,
        }
        labels = {name: self._labels.value(name, raw[name]) for name in LABELS}
        self._records.labels(**labels).inc()
        for kind, count in (
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
            ("cached_read", usage.cached_read_tokens),
            ("cached_write", usage.cached_write_tokens),
        ):
            if count:
                self._tokens.labels(**labels, kind=kind).inc(count)
        if usage.units:
            self._units.labels(**labels).inc(usage.units)
        if usage.cost_usd is None:
            self._unpriced.labels(**labels).inc()
        else:
            self._cost.labels(**labels).inc(usage.cost_usd)

    async def record(self, usage: UsageRecord) -> None:
        """Count one record."""
        self.observe(usage)

    async def aclose(self) -> None:
        """Stop serving the endpoint."""
        server, self._server = self._server, None
        if server is not None:
            # shutdown() waits for the serving thread's poll loop: keep it off the event loop.
            await asyncio.to_thread(server.shutdown)
            server.server_close()
