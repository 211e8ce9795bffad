"""Messages the agent sends on its own, shown whenever the console is open; and the link's health.

The feed listens on the store; when the store goes away the feed says so once and tries again
with growing waits, and says when it is back. Messages kept while nobody listened come first
when it reconnects, so nothing sent meanwhile is lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from cli.console_app.session import ConsoleSession
from cli.console_app.words import first_line
from usecases import streams

RETRY_S = (0.5, 1.0, 2.0, 5.0)
"""Waits between attempts to reach the store again (the last one repeats)."""


async def follow_unprompted(
    session: ConsoleSession,
    show: Callable[[str], None],
    health: Callable[[str | None], None],
) -> None:
    """Show each unprompted message on the session's channel until cancelled.

    ``health`` is told a reason when the store cannot be reached, and ``None`` once it can.
    """
    attempt = 0
    while True:
        try:
            async with streams.unprompted_messages(
                settings=session.settings, handle=session.handle, channel=session.channel
            ) as own:
                health(None)
                attempt = 0
                async for text in own:
                    show(text)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the store is away: say so, then try again
            health(f"the store is unreachable ({first_line(err)}); reconnecting")
        await asyncio.sleep(RETRY_S[min(attempt, len(RETRY_S) - 1)])
        attempt += 1
