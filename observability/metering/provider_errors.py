"""Provider failures counted by kind, through the SDK's activity meter.

``persyn_provider_errors_total`` says which way a provider is failing (refused credentials,
rate limits, timeouts, server errors, invalid requests, not configured) before the turns it
degrades pile up. Counting never changes the call: the error passes through unchanged, and
outside an activity, or with no metrics configured, nothing is counted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from temporalio import activity

from contract.provider_errors import (
    ProviderAuthError,
    ProviderError,
    ProviderInvalidRequestError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)

log = logging.getLogger(__name__)

PROVIDER_ERRORS = "persyn_provider_errors"
"""Counter of failed provider calls, labelled ``kind``, ``provider`` and ``stage``."""

KINDS: dict[type[ProviderError], str] = {
    ProviderAuthError: "auth",
    ProviderRateLimitError: "rate_limit",
    ProviderTimeoutError: "timeout",
    ProviderServerError: "server",
    ProviderInvalidRequestError: "invalid_request",
    ProviderUnavailableError: "unavailable",
}
"""The ``kind`` label of each classified failure; anything else is ``other``."""


def kind_of(error: ProviderError) -> str:
    """The ``kind`` label for ``error`` (its nearest classified ancestor)."""
    return next((kind for cls, kind in KINDS.items() if isinstance(error, cls)), "other")


def count(error: ProviderError, *, provider: str, stage: str) -> None:
    """Add one failed call of ``error``'s kind (fail-soft)."""
    if not activity.in_activity():
        return
    try:
        activity.metric_meter().create_counter(
            PROVIDER_ERRORS, "Failed model-provider calls by kind (each attempt counts)."
        ).add(1, {"kind": kind_of(error), "provider": provider, "stage": stage})
    except Exception:
        log.debug("provider error not counted", exc_info=True)


@contextmanager
def counted(*, provider: str, stage: str) -> Iterator[None]:
    """Count a :class:`ProviderError` raised inside the block, then let it through."""
    try:
        yield
    except ProviderError as err:
        count(err, provider=provider, stage=stage)
        raise
