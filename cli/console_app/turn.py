"""One turn told live: the draft streamed, tool calls as they run, then the committed outcome.

The draft is presentation only and may be lost; the receipt is the truth, and it replaces
whatever was drawn. Listening starts before the event is submitted, so no piece is missed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from cli.console_app.session import ConsoleSession
from cli.console_app.transcript import Turn
from schemas.events import InboundEvent, Receipt
from usecases.streams import DraftPiece, draft_pieces

PROGRESS_EVERY_S = 0.3
"""How often a turn in flight looks for its tool calls."""


async def _show_pieces(pieces: AsyncIterator[DraftPiece], turn: Turn) -> None:
    async for piece in pieces:
        if piece.text:
            turn.piece(piece.phase, piece.text)


async def _watch_calls(session: ConsoleSession, turn: Turn, event_id: str) -> None:
    while True:
        with contextlib.suppress(Exception):  # presentation only: the receipt says the rest
            progress = await session.progress(event_id)
            if progress.calls:
                turn.show_calls(progress.calls)
        await asyncio.sleep(PROGRESS_EVERY_S)


async def _stopped(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(task, 2)


async def tell(
    session: ConsoleSession,
    turn: Turn,
    event: InboundEvent,
    *,
    submit: Callable[[InboundEvent], Awaitable[Receipt]] | None = None,
) -> Receipt:
    """Submit ``event`` and tell its turn live in ``turn``; the receipt, once it is settled.

    Raises:
        UserError: Temporal stayed away (nothing was answered; the event may be resent).
    """
    send = submit or (lambda e: session.submit(e, on_no_worker=turn.notice))
    async with draft_pieces(settings=session.settings, event_id=event.event_id) as pieces:
        streaming = asyncio.create_task(_show_pieces(pieces, turn))
        watching = asyncio.create_task(_watch_calls(session, turn, event.event_id))
        try:
            receipt = await send(event)
        finally:
            await _stopped(watching)
            await _stopped(streaming)
    turn.settle(receipt)
    with contextlib.suppress(Exception):
        progress = await session.progress(event.event_id)
        turn.show_calls(progress.calls)
        turn.woven(progress.woven)
    return receipt
