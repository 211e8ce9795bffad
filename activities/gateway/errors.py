"""Classified provider failures: what Temporal may retry and what it must not.

Authentication and invalid-request errors will fail the same way every time, so they are not
retried. Rate limits (429), server errors (5xx) and timeouts are transient: Temporal retries
them with backoff, honouring a provider's ``Retry-After`` when it gives one.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

from temporalio.exceptions import ApplicationError


class ProviderError(Exception):
    """A model call failed. Subclasses say whether trying again can help."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ProviderAuthError(ProviderError):
    """The provider refused the credentials (401/403)."""

    retryable = False


class ProviderInvalidRequestError(ProviderError):
    """The provider refused the request itself (400/404/422): retrying cannot help."""

    retryable = False


class ProviderRateLimitError(ProviderError):
    """Too many requests (429)."""


class ProviderServerError(ProviderError):
    """The provider failed (5xx, overloaded, dropped connection)."""


class ProviderTimeoutError(ProviderError):
    """The provider did not answer in time."""


class ProviderUnavailableError(ProviderError):
    """The provider is not configured or its optional dependency is missing."""

    retryable = False


NON_RETRYABLE = [
    ProviderAuthError.__name__,
    ProviderInvalidRequestError.__name__,
    ProviderUnavailableError.__name__,
]
"""Error type names a model-call retry policy must not retry."""


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait before retrying, if the provider says.

    Reads ``retry-after-ms``, then ``retry-after`` in seconds or as an HTTP date.
    """
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def classify_status(
    status: int, message: str, *, retry_after: float | None = None
) -> ProviderError:
    """Map an HTTP status from a provider to a classified error."""
    if status in (401, 403):
        return ProviderAuthError(message)
    if status == 429:
        return ProviderRateLimitError(message, retry_after=retry_after)
    if status == 408:
        return ProviderTimeoutError(message)
    if status >= 500:
        return ProviderServerError(message, retry_after=retry_after)
    return ProviderInvalidRequestError(message)


def to_application_error(err: ProviderError) -> ApplicationError:
    """The Temporal failure for a provider error, carrying its retry classification."""
    from datetime import timedelta

    return ApplicationError(
        str(err),
        type=type(err).__name__,
        non_retryable=not err.retryable,
        next_retry_delay=timedelta(seconds=err.retry_after) if err.retry_after else None,
    )
