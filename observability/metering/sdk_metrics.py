"""The Temporal SDK's metrics on Persyn's Prometheus endpoint.

The SDK (its Rust core) can serve Prometheus itself, but on a port of its own. Instead the
worker installs a runtime whose metrics go to a :class:`~temporalio.runtime.MetricBuffer`, and
:class:`SdkMetrics` folds the buffered updates into Prometheus families served from the same
registry, and so the same endpoint, as Persyn's usage counters. The SDK's own metrics
(``temporal_*``: task latencies, slots, polls, failures) and the metrics Persyn records through
the SDK's meters (``persyn_turns``, ``persyn_turn_latency``, ``persyn_provider_errors``, which
are replay-safe inside workflows) all arrive this way.

Naming follows Prometheus: counters gain ``_total``, durations are seconds and their
histograms gain ``_seconds``. The constant ``service_name`` label is dropped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from temporalio.runtime import (
    BUFFERED_METRIC_KIND_COUNTER,
    BUFFERED_METRIC_KIND_GAUGE,
    BufferedMetricUpdate,
    MetricBuffer,
    MetricBufferDurationFormat,
    Runtime,
    TelemetryConfig,
)

log = logging.getLogger(__name__)

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
"""Histogram bounds in seconds: from a local activity to a slow model call."""

_DROPPED_LABELS = frozenset({"service_name"})
_BUFFER_SIZE = 200_000
_DRAIN_SECONDS = 1.0

Labels = tuple[tuple[str, str], ...]


@dataclass
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    total: float = 0.0

    def observe(self, value: float) -> None:
        index = next((i for i, bound in enumerate(BUCKETS) if value <= bound), len(BUCKETS))
        self.counts[index] += 1
        self.total += value


@dataclass
class _Family:
    kind: int
    help: str
    seconds: bool
    values: dict[Labels, float] = field(default_factory=dict)
    histograms: dict[Labels, _Histogram] = field(default_factory=dict)


def _labels(update: BufferedMetricUpdate) -> Labels:
    items = (
        (key, str(value).lower() if isinstance(value, bool) else str(value))
        for key, value in update.attributes.items()
        if key not in _DROPPED_LABELS
    )
    return tuple(sorted(items))


class SdkMetrics(Collector):
    """A runtime whose metrics are buffered, and a Prometheus collector serving them."""

    def __init__(self, *, drain_seconds: float = _DRAIN_SECONDS) -> None:
        """Build the runtime and start draining its buffer in the background.

        Args:
            drain_seconds: How often the buffer is emptied between scrapes (a full buffer
                drops updates).
        """
        self._buffer = MetricBuffer(_BUFFER_SIZE, MetricBufferDurationFormat.SECONDS)
        self.runtime = Runtime(telemetry=TelemetryConfig(metrics=self._buffer))
        self._families: dict[str, _Family] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._drain_loop, args=(drain_seconds,), name="persyn-sdk-metrics", daemon=True
        )
        self._thread.start()

    def _drain_loop(self, every: float) -> None:
        while not self._stop.wait(every):
            self.drain()

    def drain(self) -> None:
        """Fold every buffered update into the running families (never raises)."""
        try:
            with self._lock:
                self._fold(self._buffer.retrieve_updates())
        except Exception:
            log.warning("SDK metrics not drained", exc_info=True)

    def _fold(self, updates: Sequence[BufferedMetricUpdate]) -> None:
        for update in updates:
            metric = update.metric
            family = self._families.get(metric.name)
            if family is None:
                family = _Family(
                    kind=metric.kind,
                    help=metric.description or metric.name,
                    seconds=metric.unit == "s",
                )
                self._families[metric.name] = family
            labels = _labels(update)
            if family.kind == BUFFERED_METRIC_KIND_COUNTER:
                family.values[labels] = family.values.get(labels, 0.0) + update.value
            elif family.kind == BUFFERED_METRIC_KIND_GAUGE:
                family.values[labels] = float(update.value)
            else:
                family.histograms.setdefault(labels, _Histogram()).observe(float(update.value))

    def collect(self) -> Iterator[Metric]:
        """The families as of now (a scrape drains the buffer first)."""
        self.drain()
        with self._lock:
            for name, family in sorted(self._families.items()):
                yield _export(name, family)

    def close(self) -> None:
        """Stop the background drain."""
        self._stop.set()


def _export(name: str, family: _Family) -> Metric:
    keys = sorted({key for labels in (*family.values, *family.histograms) for key, _ in labels})

    def values(labels: Labels) -> list[str]:
        given = dict(labels)
        return [given.get(key, "") for key in keys]

    if family.kind == BUFFERED_METRIC_KIND_COUNTER:
        counter = CounterMetricFamily(name, family.help, labels=keys)
        for labels, value in family.values.items():
            counter.add_metric(values(labels), value)
        return counter
    if family.kind == BUFFERED_METRIC_KIND_GAUGE:
        gauge = GaugeMetricFamily(name, family.help, labels=keys)
        for labels, value in family.values.items():
            gauge.add_metric(values(labels), value)
        return gauge
    histogram = HistogramMetricFamily(
        f"{name}_seconds" if family.seconds else name, family.help, labels=keys
    )
    for labels, observed in family.histograms.items():
        cumulative, buckets = 0, []
        for bound, count in zip((*BUCKETS, float("inf")), observed.counts, strict=True):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else str(bound), float(cumulative)))
        histogram.add_metric(values(labels), buckets, observed.total)
    return histogram


_installed: SdkMetrics | None = None


def install() -> SdkMetrics:
    """Make a buffered runtime the process's default, before any client connects.

    A worker calls this first thing when Prometheus is among its meters; the Prometheus meter
    then serves these metrics too (see :func:`installed`).

    Raises:
        RuntimeError: A default runtime exists already (a client connected first).
    """
    global _installed
    if _installed is None:
        metrics = SdkMetrics()
        Runtime.set_default(metrics.runtime, error_if_already_set=True)
        _installed = metrics
    return _installed


def installed() -> SdkMetrics | None:
    """The SDK metrics :func:`install` set up in this process, if any."""
    return _installed
