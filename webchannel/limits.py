"""Per-token message rate limits: one integrator cannot flood an agent, or the others.

Each bearer token has a bucket of ``burst`` messages, refilled at ``per_minute``. A message
posted with an empty bucket is refused with 429 and a ``Retry-After`` before anything is read
or stored; the client resends the same ``event_id`` later and the agent still answers once.
The buckets live in the service's memory: a restart refills them, which errs on the side of
the integrator.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

DEFAULT_PER_MINUTE = 60
"""Messages a token may post per minute, sustained."""

DEFAULT_BURST = 20
"""Messages a token may post at once after a quiet spell."""


@dataclass
class _Bucket:
    level: float
    at: float


@dataclass
class MessageLimits:
    """Token buckets by bearer token ID.

    Args:
        per_minute: Sustained messages per minute per token; 0 turns the limit off.
        burst: Messages a token may post back to back.
        clock: Monotonic seconds (tests pass their own).
    """

    per_minute: int = DEFAULT_PER_MINUTE
    burst: int = DEFAULT_BURST
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, _Bucket] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.per_minute < 0 or self.burst < 1:
            raise ValueError("per_minute must be 0 or more and burst at least 1")

    def take(self, token_id: str) -> float | None:
        """Spend one message of ``token_id``'s; ``None``, or the seconds until one is due."""
        if self.per_minute == 0:
            return None
        now = self.clock()
        rate = self.per_minute / 60.0
        bucket = self._buckets.get(token_id)
        if bucket is None:
            # One per live token: a request is authenticated before it gets here, so the
            # number of buckets is bounded by the tokens an operator created.
            bucket = self._buckets[token_id] = _Bucket(level=float(self.burst), at=now)
        bucket.level = min(float(self.burst), bucket.level + (now - bucket.at) * rate)
        bucket.at = now
        if bucket.level >= 1.0:
            bucket.level -= 1.0
            return None
        return (1.0 - bucket.level) / rate


def retry_after(seconds: float) -> str:
    """The ``Retry-After`` header value for a wait of ``seconds`` (whole seconds, at least 1)."""
    return str(max(1, math.ceil(seconds)))
