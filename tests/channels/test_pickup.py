"""The terminal keeps what the agent said while nobody was there, and shows it on connect."""

from __future__ import annotations

import asyncio
import contextlib

from schemas.delivery import DeliveryStatus
from tests.channels.helpers import outbox_row, queue_unprompted
from tests.harness import Harness, terminal, until
from usecases import streams


async def test_a_console_shows_kept_messages_first_and_each_is_picked_up_once(
    harness: Harness,
) -> None:
    agent = await harness.create_agent()
    here = terminal("console")
    kept = await queue_unprompted(harness, agent.handle, here, "You were away: the kettle boiled.")

    async def awaiting() -> bool:
        row = await outbox_row(harness, kept)
        return row is not None and row.status == DeliveryStatus.AWAITING_PICKUP

    await until(awaiting)
    settings = harness.deps.settings
    async with streams.unprompted_messages(
        settings=settings, handle=agent.handle, channel=here
    ) as texts:
        assert await asyncio.wait_for(anext(texts), 10) == "You were away: the kettle boiled."
        live = await queue_unprompted(harness, agent.handle, here, "And now the tea is ready.")
        assert await asyncio.wait_for(anext(texts), 10) == "And now the tea is ready."
        # Asking for the next message says the last one was shown.
        waiting = asyncio.ensure_future(anext(texts))

        async def settled() -> bool:
            row = await outbox_row(harness, live)
            return row is not None and row.status == DeliveryStatus.DELIVERED

        # Shown live: its delivery run finds it delivered and never keeps it for pickup.
        await until(settled)
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting

    first = await outbox_row(harness, kept)
    assert first is not None and first.status == DeliveryStatus.DELIVERED
    # A second console sees nothing kept.
    async with streams.unprompted_messages(
        settings=settings, handle=agent.handle, channel=here
    ) as again:
        pending = asyncio.ensure_future(anext(again))
        done, _ = await asyncio.wait({pending}, timeout=0.5)
        assert not done
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pending
