"""The render activities: draw (or edit) through an OpenAI-compatible images endpoint.

A render is stored as ``home/images/{agent}/{render_id}.png``; that path is its retrievable
reference. The file is written once per render ID, so a retried activity does not draw (or
bill) the same picture twice. An edit starts from renders or from pictures a person sent,
kept beside them (``activities/images/files.py``). One usage record per image, priced per
image from the price table (Appendix C), attributed to the activation whose tool call asked
for it.
"""

from __future__ import annotations

import asyncio
import base64
import time
from pathlib import Path

import httpx
import openai
from openai import AsyncOpenAI
from openai.types import ImagesResponse
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.channels.starting import start_delivery
from activities.images.files import SUFFIXES, find_image, keep
from observability.metering.hub import MeterHub
from observability.metering.producer import emit_work, work_record
from schemas.delivery import DeliverySettings
from schemas.images import (
    IMAGE_PREFIX,
    DeliverRenderInput,
    ImageSettings,
    RenderImageInput,
    RenderResult,
)
from schemas.pricing import PriceTable
from store.db import Database
from store.queries.agents import get_agent
from store.queries.contacts import send_unprompted
from store.tables.columns import utcnow

STAGE = "image"
MAX_IMAGE_BYTES = 50_000_000


def image_path(root: Path, agent: str, render_id: str) -> Path:
    """Where render ``render_id`` of ``agent`` is kept."""
    return root / agent / f"{render_id}.png"


class ImageActivities:
    """Renders through the configured endpoint and delivers them to conversations."""

    def __init__(
        self,
        db: Database,
        settings: ImageSettings,
        root: Path,
        *,
        meters: MeterHub | None = None,
        prices: PriceTable | None = None,
        delivery: DeliverySettings | None = None,
    ):
        self._db = db
        self._delivery = delivery or DeliverySettings()
        self._settings = settings
        self._root = root
        self._meters = meters
        self._prices = prices

    def _client(self) -> AsyncOpenAI:
        key = self._settings.api_key
        return AsyncOpenAI(
            base_url=self._settings.base_url,
            api_key=key.get_secret_value() if key else "unused",
            timeout=self._settings.timeout_seconds,
            max_retries=0,  # Temporal retries the activity, with its own policy
        )

    @activity.defn(name="images.render")
    async def render(self, data: RenderImageInput) -> RenderResult:
        """Draw the picture once and keep it; a server error is retried by Temporal.

        Raises:
            ApplicationError: ``ImageRefused`` (not retried) when the endpoint refuses the
                request; retryable for a server error, a timeout or no answer.
        """
        path = image_path(self._root, data.agent, data.render_id)
        if path.exists():  # a retry after the file was kept: nothing to draw or bill again
            return RenderResult(render_id=data.render_id, status="done", reference=str(path))
        sources: list[Path] = []
        for source_id in data.edit_of:
            # A render of the agent's, or a picture a person sent it: both are kept alike.
            found = find_image(self._root, data.agent, source_id)
            if found is None:
                raise ApplicationError(
                    f"there is no image {source_id} to edit", type="ImageRefused"
                )
            sources.append(found)
        started = time.monotonic()
        client = self._client()
        try:
            response = await self._draw(client, data.prompt, sources)
        except openai.APIStatusError as err:
            if 400 <= err.status_code < 500 and err.status_code not in (408, 429):
                raise ApplicationError(
                    f"the images endpoint refused the request (HTTP {err.status_code})",
                    type="ImageRefused",
                    non_retryable=True,
                ) from None
            raise ApplicationError(f"the images endpoint failed (HTTP {err.status_code})") from None
        except (openai.APIConnectionError, httpx.HTTPError) as err:
            raise ApplicationError(f"the images endpoint did not answer: {err}") from None
        finally:
            await client.close()
        image = await self._image_of(response)
        await asyncio.to_thread(keep, path, image)
        emit_work(
            self._meters,
            work_record(
                stage=STAGE,
                provider="openai-compatible",
                model=self._settings.model,
                units=1,
                variant=self._settings.size,
                prices=self._prices,
                record_id=f"image-{data.render_id}",
                latency_ms=(time.monotonic() - started) * 1000,
            ),
        )
        return RenderResult(render_id=data.render_id, status="done", reference=str(path))

    async def _image_of(self, response: ImagesResponse) -> bytes:
        """The image's bytes: inline, or (servers that ignore ``b64_json``) from its URL."""
        first = response.data[0] if response.data else None
        if first is not None and first.b64_json:
            return base64.b64decode(first.b64_json)
        if first is None or not first.url:
            raise ApplicationError("the images endpoint returned no image", type="ImageRefused")
        # The URL comes from the endpoint the operator configured, not from the model.
        body = bytearray()
        try:
            async with (
                httpx.AsyncClient(timeout=self._settings.timeout_seconds) as http,
                http.stream("GET", first.url) as got,
            ):
                got.raise_for_status()
                async for chunk in got.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_IMAGE_BYTES:
                        raise ApplicationError("the image is over 50 MB", type="ImageRefused")
        except httpx.HTTPError as err:
            raise ApplicationError(f"could not fetch the rendered image: {err}") from None
        return bytes(body)

    async def _draw(self, client: AsyncOpenAI, prompt: str, sources: list[Path]) -> ImagesResponse:
        if not sources:
            return await client.images.generate(
                model=self._settings.model,
                prompt=prompt,
                size=self._settings.size,
                n=1,
                response_format="b64_json",
            )
        images = [
            (path.name, await asyncio.to_thread(path.read_bytes), SUFFIXES[path.suffix])
            for path in sources
        ]
        return await client.images.edit(
            model=self._settings.model,
            image=images,
            prompt=prompt,
            size=self._settings.size,
            n=1,
        )

    @activity.defn(name="images.deliver")
    async def deliver(self, data: DeliverRenderInput) -> bool:
        """Send the render's outcome to the conversation as an unprompted message, once."""
        async with self._db.session() as session:
            found = await get_agent(session, handle=data.agent)
            _, queued = await send_unprompted(
                session,
                message_id=data.result.render_id,
                agent=data.agent,
                agent_name=found.name if found else data.agent,
                channel=data.channel,
                text=render_message(data),
                at=utcnow(),
            )
        # Started here rather than left to the sweep, so a push channel gets it at once.
        await start_delivery(
            activity.client(),
            message_id=data.result.render_id,
            agent=data.agent,
            channel=data.channel,
            unprompted=True,
            settings=self._delivery,
        )
        return queued


def render_message(data: DeliverRenderInput) -> str:
    """The outcome as the conversation (and the agent's next turn) reads it."""
    result = data.result
    head = f"{IMAGE_PREFIX}{result.render_id}: {result.status}]"
    if result.status == "done":
        return f"{head} {data.prompt[:200]} -> {result.reference}"
    return f"{head} could not render {data.prompt[:200]!r}: {result.error}"
