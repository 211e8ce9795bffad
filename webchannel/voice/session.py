"""A call's session in the web process: a cache of its workflow, the prompt, the fragments.

The call's workflow (``workflows/call.py``) is the durable record; this cache keeps what the
fast path reads on every turn in memory, so a spoken answer waits for no workflow round trip.
A process that restarts rebuilds a call's session from its workflow on the next turn.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from schemas.events import ChannelRef
from schemas.voice import CallDirection

MAX_SESSIONS = 1_000
"""Calls one process keeps cached; the least recently heard is dropped first (and rebuilt)."""


@dataclass
class CallSession:
    """One call as the web process holds it."""

    call_id: str
    agent: str
    agent_name: str
    persona: str
    tenant: str
    channel: ChannelRef
    direction: CallDirection
    person: str
    """How the agent names the other party (their name, else their number)."""
    speaker_id: str
    conversation_id: str | None = None
    system: str | None = None
    """The system prompt the pipeline last assembled for this call, cached."""
    system_at: float = 0.0
    system_turns: int = 0
    newest_activation: str | None = None
    """The newest background run that finished: its prompt is the next refresh."""
    pending: list[str] = field(default_factory=list)
    """Background conclusions not yet woven into speech."""
    turns: int = 0
    cued: bool = False
    """The direction cue went to the pipeline (with the call's first words)."""
    greeting: str | None = None
    """What the agent said when the call opened in silence, before the caller's first words:
    the cue carries it into the call's conversation with those words."""
    generation: int = 0
    fragments: list[str] = field(default_factory=list)
    persisting: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Keeps the call's turns in the order they were spoken."""

    def stale(self, *, max_age_s: float, max_turns: int) -> bool:
        """Whether the cached system prompt should be refreshed before this turn."""
        if self.system is None:
            return self.newest_activation is not None
        return (time.monotonic() - self.system_at) >= max_age_s or self.system_turns >= max_turns

    async def settle(self, text: str, window_s: float) -> str | None:
        """The settled turn ``text`` belongs to, or ``None`` when a later fragment took it over.

        Fragments of one turn that arrive within ``window_s`` of each other are answered once,
        by the last request, with their words merged.
        """
        self.generation += 1
        mine = self.generation
        self.fragments.append(text)
        if window_s > 0:
            await asyncio.sleep(window_s)
        if self.generation != mine:
            return None
        merged = merge_fragments(self.fragments)
        self.fragments.clear()
        return merged


def merge_fragments(fragments: list[str]) -> str:
    """Fragments as one utterance: a fragment that revises (extends) the last replaces it."""
    merged = ""
    for fragment in fragments:
        piece = fragment.strip()
        if not piece or piece in merged:
            continue
        merged = piece if piece.startswith(merged) else f"{merged} {piece}".strip()
    return merged


class CallSessions:
    """The process's cached calls, by call ID, bounded."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self._calls: OrderedDict[str, CallSession] = OrderedDict()
        self._limit = limit
        self.opening = asyncio.Lock()
        """Held while a call's session is built, so two first fragments build it once."""

    def get(self, call_id: str) -> CallSession | None:
        """The cached call, touched as recently heard."""
        session = self._calls.get(call_id)
        if session is not None:
            self._calls.move_to_end(call_id)
        return session

    def put(self, session: CallSession) -> None:
        """Cache ``session``, dropping the least recently heard past the limit."""
        self._calls[session.call_id] = session
        self._calls.move_to_end(session.call_id)
        while len(self._calls) > self._limit:
            self._calls.popitem(last=False)

    def drop(self, call_id: str) -> None:
        """Forget a call (it ended)."""
        self._calls.pop(call_id, None)
