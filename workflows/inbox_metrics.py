"""The inbox's health as a metric: since when its oldest event has been waiting.

Published as a timestamp, not an age: a gauge is only set when the agent's workflow runs a
task, and an inbox held by a stuck step runs none, so an age set then would stand still exactly
when it matters. The timestamp stays true; Prometheus computes the age (``time() - ts``: the
``PersynInboxHeld`` alert in ``deploy/alerts.yml`` and the dashboard panel). Like every
workflow metric, the SDK records nothing while it replays.

Deterministic: only ``workflow`` APIs.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow

OLDEST_WAITING = "persyn_inbox_oldest_waiting_timestamp_seconds"
"""Gauge per agent: Unix time the oldest event still waiting for its marker (queued or in
flight) was taken; 0 when the inbox is empty."""


def oldest_waiting(agent: str, since: datetime | None) -> None:
    """Publish when ``agent``'s oldest waiting event was taken (``None``: none is waiting)."""
    workflow.metric_meter().create_gauge(
        OLDEST_WAITING,
        "Unix time the agent's oldest event still waiting for its marker was taken; 0 if none.",
        "s",
    ).set(int(since.timestamp()) if since is not None else 0, {"agent": agent})


ON_CALL = "persyn_inbox_on_call_since_timestamp_seconds"
"""Gauge per agent: Unix time a live call took the agent's lock; 0 when no call holds it. The
events that wait meanwhile wait by design (docs/channels.md, "Live voice"), so the inbox-held
alert leaves such an agent out."""


def on_call(agent: str, since: datetime | None) -> None:
    """Publish since when a live call has held ``agent``'s lock (``None``: no call holds it)."""
    workflow.metric_meter().create_gauge(
        ON_CALL,
        "Unix time a live call took the agent's lock; 0 if no call holds it.",
        "s",
    ).set(int(since.timestamp()) if since is not None else 0, {"agent": agent})
