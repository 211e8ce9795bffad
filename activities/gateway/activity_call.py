"""One model call made from inside an activity: heartbeating while it runs, its failure classified.

The critics, the refiner and the judge, the emotion reading, the heartbeat's assessment and a
delegated task's report all call :func:`complete`, so each heartbeats the same way and fails
with the same retry classification.
"""

from __future__ import annotations

from activities.gateway.base import DeltaCallback
from activities.gateway.errors import to_application_error
from activities.gateway.gateway import ModelGateway
from activities.heartbeating import heartbeating
from contract.provider_errors import ProviderError
from schemas.models import ModelRequest, ModelResponse


async def complete(
    gateway: ModelGateway, request: ModelRequest, *, on_delta: DeltaCallback | None = None
) -> ModelResponse:
    """One model call from an activity, heartbeating while it runs.

    Raises:
        ApplicationError: A classified provider failure; Temporal retries the transient ones.
    """
    try:
        async with heartbeating():
            return await gateway.complete(request, on_delta=on_delta)
    except ProviderError as err:
        raise to_application_error(err) from err
