"""Finished renders, noted for the agent's next turn (a :class:`DeliveredSource`)."""

from __future__ import annotations

from activities.context.delivered import DeliveredSource
from activities.context.fencing import Provenance
from schemas.images import IMAGE_PREFIX
from store.db import Database

RENDERS = Provenance(
    source="images",
    origin="the images you asked for with generate_image",
    trust="your own renders: the prompt you gave and where the image is kept",
)


def renders_source(db: Database) -> DeliveredSource:
    """The newest renders delivered on the channel, newest first."""
    return DeliveredSource(
        db,
        name="images",
        prefix=IMAGE_PREFIX,
        title="Images you asked for (newest first):",
        order=48,
        provenance=RENDERS,
    )
