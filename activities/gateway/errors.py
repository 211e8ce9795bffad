"""How the gateway classifies a provider's failure and hands it to Temporal.

The classes themselves live in :mod:`contract.provider_errors`, below every layer that raises,
counts or retries them; here are the gateway's readings of a provider's answer (its status,
its ``Retry-After``) and the Temporal failure a classified error becomes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

from temporalio.exceptions import ApplicationError

from contract.provider_errors import (
    ProviderAuthError,
    ProviderError,
    ProviderInvalidRequestError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderTimeoutError,
)


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
