"""The supervisor's webhook: one JSON POST per firing; a failure raises so Temporal retries."""

from __future__ import annotations

from typing import Any

import httpx


class WebhookError(RuntimeError):
    """The webhook answered with an error status or could not be reached."""


async def post_firing(url: str, body: dict[str, Any], *, timeout: float) -> int:
    """POST ``body`` to ``url``; the status code, or :class:`WebhookError` on any failure."""
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            response = await client.post(url, json=body)
    except httpx.HTTPError as err:
        raise WebhookError(f"webhook unreachable: {type(err).__name__}") from None
    if response.status_code >= 300:
        raise WebhookError(f"webhook answered {response.status_code}")
    return response.status_code
