"""Affording a reply on a paced channel before it is generated (docs/channels.md, Pacing).

The delivery workflow paces a message after it exists; by then its generation has been paid
for. ``channels.afford_reply`` is asked by the activation before it assembles context or calls
a model: once the agent has spent the channel's token budget (every model call of its runs on
that channel, from the usage ledger), the activation ends silent with the reason instead.
"""

from __future__ import annotations

from datetime import UTC, datetime

from temporalio import activity

from schemas.delivery import Affordance, AffordReplyInput, PacingSettings
from store.db import Database
from store.queries.delivery import budget_withheld, pacing_on


class PacingActivities:
    """The pacing questions an activation asks before it spends anything."""

    def __init__(self, db: Database, pacing: PacingSettings) -> None:
        self._db = db
        self._pacing = pacing

    @activity.defn(name="channels.afford_reply")
    async def afford_reply(self, data: AffordReplyInput) -> Affordance:
        """Whether the agent may still spend on the channel; unpaced channels always may."""
        key = data.channel.key
        settings = await pacing_on(
            self._db.lane, agent=data.agent, channel_key=key, defaults=self._pacing
        )
        if data.channel.service not in settings.paced_services:
            return Affordance()
        # Reads only: no transaction around them.
        async with self._db.autocommit() as session:
            withheld = await budget_withheld(
                session,
                agent=data.agent,
                channel_key=key,
                settings=settings,
                now=datetime.now(UTC),
                excluding_activation=data.activation_id,
            )
        return Affordance(withheld=withheld)
