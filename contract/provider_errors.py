"""Classified provider failures: what Temporal may retry and what it must not.

Authentication and invalid-request errors will fail the same way every time, so they are not
retried. Rate limits (429), server errors (5xx) and timeouts are transient: Temporal retries
them with backoff, honouring a provider's ``Retry-After`` when it gives one.

The classes' names are the failure types a failed model call carries across the wire
(``activities.gateway.errors.to_application_error``), so they sit here, below the gateway that
raises them, the meters that count them (``observability.metering.provider_errors``) and the
retry policy that reads their names (:data:`contract.policies.MODEL_NON_RETRYABLE`).
"""

from __future__ import annotations


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
