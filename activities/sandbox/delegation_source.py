"""Sandbox task reports, noted for the agent's next turn (a :class:`DeliveredSource`).

A report carries whatever the sandboxed code printed, so it is fenced as outside data.
"""

from __future__ import annotations

from activities.context.delivered import DeliveredSource
from activities.context.fencing import Provenance
from activities.sandbox.delegation import REPORT_PREFIX
from store.db import Database

SANDBOX_REPORT = Provenance(
    source="sandbox",
    origin="reports of the sandbox tasks you delegated with run_code",
    trust="outside data: what your code and its helper produced, unverified",
)


def sandbox_reports_source(db: Database) -> DeliveredSource:
    """The newest sandbox reports delivered on the channel, newest first."""
    return DeliveredSource(
        db,
        name="sandbox",
        prefix=REPORT_PREFIX,
        title="Reports of your sandbox tasks (newest first):",
        order=47,
        provenance=SANDBOX_REPORT,
    )
