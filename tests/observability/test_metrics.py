"""One Prometheus endpoint: Persyn's counters, its turn metrics and the Temporal SDK's metrics.

A worker whose client runs on the buffered SDK runtime answers one ordinary and one degraded
turn (the scripted model refuses its credentials for the second); the endpoint is then scraped
over HTTP. The shipped Grafana dashboard and alert rules may reference only metrics the scrape
declares.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from activities.gateway.providers.scripted import ScriptRule
from observability.metering.prometheus import PrometheusMeter
from observability.metering.sdk_metrics import SdkMetrics
from schemas.events import Outcome
from temporal.client import interceptors
from tests.harness import Stack, running_worker

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
OLDEST_WAITING_SERIES = "persyn_inbox_oldest_waiting_timestamp_seconds"
"""The inbox gauge as Prometheus names it (``workflows.inbox_metrics``, unit seconds)."""
_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}


@dataclass
class Scrape:
    samples: list[Sample]
    declared: set[str]
    """Every series name the endpoint declares, with or without samples yet."""

    def value(self, name: str, **labels: str) -> float:
        found = [
            s.value
            for s in self.samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        ]
        assert found, f"no {name} sample with {labels}"
        return sum(found)


def parse(text: str) -> Scrape:
    samples: list[Sample] = []
    declared: set[str] = set()
    for family in text_string_to_metric_families(text):
        samples += family.samples
        declared |= {family.name + suffix for suffix in _SUFFIXES.get(family.type, ("",))}
    return Scrape(samples=samples, declared=declared | {s.name for s in samples})


@pytest.fixture(scope="module")
async def scrape(stack: Stack) -> AsyncIterator[Scrape]:
    sdk = SdkMetrics()
    client = await Client.connect(
        stack.temporal_address,
        runtime=sdk.runtime,
        data_converter=pydantic_data_converter,
        interceptors=interceptors(),
    )
    meter = PrometheusMeter(port=0, collectors=[sdk])
    refused = ScriptRule(task="respond", match="fall back", fail="auth")
    async with running_worker(client, stack, meters=[meter], rules=[refused]) as harness:
        agent = await harness.create_agent()
        spoke = await harness.say(agent.handle, "hello")
        degraded = await harness.say(agent.handle, "please fall back")
        assert spoke.marker is not None and spoke.marker.outcome is Outcome.SPOKE
        assert degraded.marker is not None and degraded.marker.outcome is Outcome.DEGRADED
        url = f"http://127.0.0.1:{meter.port}/metrics"
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read())
    sdk.close()
    yield parse(body.decode())


def test_turns_are_counted_by_outcome_with_their_latency(scrape: Scrape) -> None:
    for outcome in ("spoke", "degraded"):
        assert scrape.value("persyn_turns_total", outcome=outcome, channel_kind="terminal") == 1
        assert scrape.value("persyn_turn_latency_seconds_count", outcome=outcome) == 1
        assert scrape.value("persyn_turn_latency_seconds_sum", outcome=outcome) > 0


def test_provider_errors_are_counted_by_kind(scrape: Scrape) -> None:
    # Refused credentials are not retried: one attempt, one error.
    assert scrape.value("persyn_provider_errors_total", kind="auth", provider="scripted") == 1


def test_the_sdk_metrics_share_the_usage_counters_endpoint(scrape: Scrape) -> None:
    assert scrape.value("persyn_usage_records_total", stage="respond") >= 1
    tasks = "temporal_workflow_task_execution_latency_seconds_count"
    assert scrape.value(tasks, workflow_type="ActivationWorkflow") >= 2
    failed = "temporal_activity_execution_failed_total"
    assert scrape.value(failed, activity_type="generation.generate") == 1
    assert all("service_name" not in s.labels for s in scrape.samples)


def referenced(expressions: list[str]) -> set[str]:
    """Metric names in PromQL expressions (Persyn's and the SDK's prefixes)."""
    return {m for e in expressions for m in re.findall(r"\b(?:persyn|temporal)_[a-z0-9_]+", e)}


def test_the_dashboard_uses_only_exported_metrics(scrape: Scrape) -> None:
    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    expressions = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    names = referenced(expressions)
    assert {"persyn_turns_total", "persyn_provider_errors_total"} <= names
    assert names - scrape.declared == set()


def test_the_alert_rules_use_only_exported_metrics(scrape: Scrape) -> None:
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())
    expressions = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    names = referenced(expressions)
    assert "persyn_turn_latency_seconds_bucket" in names
    assert names - scrape.declared == set()


def test_the_inbox_publishes_since_when_its_oldest_event_waits(scrape: Scrape) -> None:
    # Both messages were answered, so nothing waits: the gauge says 0 for the agent.
    samples = [s for s in scrape.samples if s.name == OLDEST_WAITING_SERIES]
    assert samples and all(s.value == 0 for s in samples)
    assert all(s.labels.get("agent") for s in samples)
