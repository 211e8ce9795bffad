"""Where a reply's token deltas go while it is generated (Appendix B)."""

from __future__ import annotations

from pydantic import Field

from schemas.events import Wire


class StreamTarget(Wire):
    """Where token deltas go, best effort (Appendix B): a LISTEN/NOTIFY channel key."""

    key: str = Field(pattern=r"^[A-Za-z0-9_]{1,60}$")
    phase: str = "draft"
