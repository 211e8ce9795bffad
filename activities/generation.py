"""The generate activity: a stored prompt through the model gateway, streamed best effort."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.channels.stream import NotifySink
from activities.gateway.errors import ProviderError, to_application_error
from activities.gateway.gateway import ModelGateway
from schemas.activation import GenerateInput, Generation
from schemas.models import ChatMessage, ModelRequest
from store.db import Database
from store.queries.runtime import load_prompt

log = logging.getLogger(__name__)

HEARTBEAT_EVERY_S = 2.0
"""Heartbeat cadence while a model call runs, so a dead worker's call is retried promptly."""


async def _heartbeat_until_cancelled() -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(HEARTBEAT_EVERY_S)


class GenerationActivities:
    """Model calls of the response pipeline."""

    def __init__(self, db: Database, gateway: ModelGateway) -> None:
        self._db = db
        self._gateway = gateway

    async def _request(self, data: GenerateInput) -> ModelRequest:
        async with self._db.session() as session:
            row = await load_prompt(session, prompt_id=data.prompt.prompt_id)
        if row is None:
            raise ApplicationError(
                f"prompt {data.prompt.prompt_id} is missing",
                type="PromptMissing",
                non_retryable=True,
            )
        return ModelRequest(
            task=data.prompt.task,
            system=row.system,
            messages=[ChatMessage.model_validate(m) for m in row.messages],
        )

    @activity.defn(name="generation.generate")
    async def generate(self, data: GenerateInput) -> Generation:
        """Generate a candidate from the stored prompt.

        Raises:
            ApplicationError: A classified provider failure; Temporal retries the transient ones.
        """
        request = await self._request(data)
        # Outside Temporal (benchmarks, tools) there is nobody to heartbeat to.
        beating = asyncio.create_task(
            _heartbeat_until_cancelled() if activity.in_activity() else asyncio.sleep(0)
        )
        try:
            async with contextlib.AsyncExitStack() as stack:
                on_delta = None
                if data.stream is not None:
                    try:
                        sink = await stack.enter_async_context(
                            NotifySink(self._db.dsn, data.stream.key, data.stream.phase)
                        )
                        on_delta = sink.delta
                    except Exception:
                        log.info("token stream unavailable; generating without it", exc_info=True)
                response = await self._gateway.complete(request, on_delta=on_delta)
        except ProviderError as err:
            raise to_application_error(err) from err
        finally:
            beating.cancel()
        return Generation(
            text=response.text.strip(),
            model=response.model,
            provider=response.provider.value,
            finish_reason=response.finish_reason,
            usage=response.usage,
        )
