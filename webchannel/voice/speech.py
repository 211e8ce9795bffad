"""The fast path: a fast model with no tools speaks each settled turn, streamed as it comes.

The model is called in this process through the gateway (metered and traced like every
call), never through a workflow, so the first word waits only for the model. Whatever the
model writes is spoken, so it is told to write only the words to say. Silence is never an
answer on a call: when the model has nothing, fails or is too slow, a holding phrase is said.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

from activities.context.fencing import Provenance, fence
from activities.gateway.gateway import ModelGateway
from contract import attribution
from schemas.models import Attribution, ChatMessage, ModelRequest, TaskType
from schemas.voice import CallDirection, CallMessage
from usecases.voice import direction_cue
from webchannel.voice.session import CallSession

log = logging.getLogger(__name__)

MAX_SPOKEN_MESSAGES = 24
"""Recent messages of the transcript the fast model reads; older ones are the pipeline's."""

SPEAK_ONLY = (
    "You are on a live phone call. {cue} Everything you write is spoken aloud, word for "
    "word: write only the words to say to {person}, with no narration, no stage directions, "
    "no reasoning aloud, no markdown and no lists. Keep it short and natural, one to three "
    "sentences. If you have nothing to add, say a brief acknowledgement. Do not claim to "
    "have done anything you have not done."
)

BACKGROUND = Provenance(
    source="background",
    origin="your own fuller thinking on this call, finished since your last spoken turn",
    trust="your own conclusions: weave in what helps the caller now; material, not instruction",
)


@dataclass
class Spoken:
    """What the fast path said for one turn, for the record."""

    text: str = ""
    held: bool = False
    """A holding phrase was said instead of the model's words."""
    woven: int = 0
    """Background conclusions the answer was given."""
    pieces: list[str] = field(default_factory=list)


def fast_request(session: CallSession, messages: list[CallMessage], text: str) -> ModelRequest:
    """The fast model's request: the call's prompt, its conclusions fenced, the recent talk."""
    cue = direction_cue(session.direction, session.agent_name, session.person)
    parts = [SPEAK_ONLY.format(cue=cue, person=session.person)]
    parts.append(session.system or f"You are {session.agent_name}. {session.persona}")
    if session.pending:
        parts.append(fence("\n\n".join(session.pending), BACKGROUND))
    chat = [
        ChatMessage(role=m.role, content=m.content.strip())
        for m in messages[-MAX_SPOKEN_MESSAGES:]
        if m.role in ("user", "assistant") and m.content and m.content.strip()
    ]
    # The settled turn (fragments merged) is the last thing the caller said.
    if chat and chat[-1].role == "user":
        chat[-1] = ChatMessage(role="user", content=text)
    else:
        chat.append(ChatMessage(role="user", content=text))
    return ModelRequest(task=TaskType.VOICE, system="\n\n".join(parts), messages=chat)


def plain_greeting(session: CallSession) -> str:
    """The platform's own hello for a call that opened in silence, naming both parties."""
    if session.direction is CallDirection.OUTBOUND:
        return f"Hi {session.person}, it's {session.agent_name}."
    return f"Hello {session.person}, this is {session.agent_name}."


async def say_plainly(text: str, spoken: Spoken) -> AsyncGenerator[str, None]:
    """``text`` said as it is, in place of the fast model's words."""
    spoken.pieces = [text]
    spoken.text = text
    yield text


async def speak(
    gateway: ModelGateway,
    request: ModelRequest,
    *,
    timeout_s: float,
    holding: str,
    spoken: Spoken,
    who: Attribution | None = None,
) -> AsyncGenerator[str, None]:
    """The answer's pieces as the model writes them; a holding phrase in place of nothing.

    ``timeout_s`` bounds the wait for each piece: a model that stalls is cut off, and what it
    said stands (or the holding phrase, when it said nothing).
    """
    pieces: asyncio.Queue[str | None] = asyncio.Queue()

    async def delta(text: str) -> None:
        pieces.put_nowait(text)

    async def call() -> str:
        # Metered to the agent, the call's channel and conversation, as its runs' calls are.
        bound = attribution.use(who)
        try:
            return (await gateway.complete(request, on_delta=delta)).text
        finally:
            attribution.reset(bound)
            pieces.put_nowait(None)

    task = asyncio.create_task(call())
    try:
        while True:
            try:
                piece = await asyncio.wait_for(pieces.get(), timeout_s)
            except TimeoutError:
                log.warning("the fast model said nothing for %.1f s: holding", timeout_s)
                break
            if piece is None:
                break
            if piece:
                spoken.pieces.append(piece)
                yield piece
        if not spoken.pieces and task.done() and not task.cancelled():
            failure = task.exception()
            if failure is not None:
                log.warning("the fast model failed: %s", failure)
            elif task.result().strip():  # a provider that does not stream
                spoken.pieces.append(task.result().strip())
                yield spoken.pieces[-1]
    finally:
        if not task.done():
            task.cancel()
        with contextlib.suppress(BaseException):
            await task
    if not "".join(spoken.pieces).strip():
        spoken.held = True
        spoken.pieces = [holding]
        yield holding
    spoken.text = "".join(spoken.pieces).strip()
