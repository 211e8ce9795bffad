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
from usecases.turns import TurnProgress

PROGRESS_EVERY_S = 0.3
"""How often a turn in flight looks for its tool calls."""
AFTERMATH_S = 60.0
"""How long after its receipt a turn's activation is waited for (background work runs there)."""


async def _show_pieces(pieces: AsyncIterator[DraftPiece], turn: Turn) -> None:
    async for piece in pieces:
        if piece.text:
            turn.piece(piece.phase, piece.text)


async def _watch_calls(session: ConsoleSession, turn: Turn, event_id: str) -> None:
    known: list[str] = []
    while True:
        # Slept first: a reply without tools ends before anything is asked.
        await asyncio.sleep(PROGRESS_EVERY_S)
        with contextlib.suppress(Exception):  # presentation only: the receipt says the rest
            progress = await session.progress(event_id, known)
            known = progress.activation_ids
            if progress.calls:
                turn.show_calls(progress.calls)


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
    # Read before settling, so the outcome and its final tool statuses show together.
    progress = await _progress(session, event.event_id)
    turn.settle(receipt)
    _show(turn, progress)
    return receipt


async def aftermath(session: ConsoleSession, turn: Turn) -> None:
    """Once the turn's activation has ended, mark the earlier conclusions it wove in.

    They are consumed after the reply is transmitted, so after the receipt.
    """
    if turn.activation_id is not None:
        await session.ended(turn.activation_id, AFTERMATH_S)
        _show(turn, await _progress(session, turn.event_id))


async def _progress(session: ConsoleSession, event_id: str) -> TurnProgress | None:
    try:
        return await session.progress(event_id)
    except Exception:  # presentation only: the receipt is the truth
        return None


def _show(turn: Turn, progress: TurnProgress | None) -> None:
    if progress is not None:
        turn.show_calls(progress.calls)
        turn.woven(progress.woven)
