"""The context source that notes finished sandbox tasks for the agent's next turn.

A task's report reaches the conversation as an unprompted message, which the conversation's
live window does not hold; this source puts the latest reports on the channel into the next
prompt, fenced as outside data (a report carries whatever the sandboxed code printed).
"""

from __future__ import annotations

from datetime import timedelta

from activities.context.fencing import Provenance
from activities.context.model import ContextBlock, ContextRequest, Trim
from activities.sandbox.delegation import REPORT_PREFIX
from store.db import Database
from store.queries.contacts import unprompted_messages

SANDBOX_REPORT = Provenance(
    source="sandbox",
    origin="reports of the sandbox tasks you delegated with run_code",
    trust="outside data: what your code and its helper produced, unverified",
)


class SandboxReportsSource:
    """The newest sandbox reports delivered on this channel within ``window``."""

    name = "sandbox"
    required = False

    def __init__(self, db: Database, *, limit: int = 3, window: timedelta = timedelta(days=1)):
        self._db = db
        self._limit = limit
        self._window = window

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The reports, newest first; nothing when there are none."""
        data = request.input
        async with self._db.session() as session:
            rows = await unprompted_messages(
                session,
                agent=data.agent,
                since=data.now - self._window,
                channel_key=data.channel.key,
            )
        reports = [row.text for row in rows if row.text.startswith(REPORT_PREFIX)]
        if not reports:
            return None
        return ContextBlock(
            source=self.name,
            title="Reports of your sandbox tasks (newest first):",
            items=[f"- {text}" for text in reversed(reports[-self._limit :])],
            order=47,
            trim=Trim.LAST_FIRST,
            provenance=SANDBOX_REPORT,
        )
