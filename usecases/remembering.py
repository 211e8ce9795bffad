"""Memories formed as of a stop: ``persyn down`` asks every open conversation to remember now.

Memories otherwise form when a conversation closes (after its idle time) or every
``chunk_tokens``, so a first session stopped after a few messages left nothing remembered. Before
the stack stops, each open conversation gets the ``remember_now`` update: it starts a
consolidation of what was said since its last memory and answers once it has started. The
consolidation is a workflow, so it finishes on its own, at the next ``persyn up`` if the stack
stops first. A conversation that does not answer within the time given is left as it is (its
turns are remembered at its close, as before); nothing is lost either way.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError

from contract import names
from schemas.conversation import RememberNow, RememberNowResult
from schemas.settings import Settings
from store.queries.dialog import every_open_conversation
from temporal.client import connect
from usecases.store import open_store

REASON = "persyn down: the stack is stopping"


@dataclass
class Remembered:
    """What the open conversations said."""

    started: list[str] = field(default_factory=list)
    """Conversations whose memory of the turns since the last one is forming."""
    nothing: list[str] = field(default_factory=list)
    """Conversations with nothing said since their last memory (or closing)."""
    unanswered: list[str] = field(default_factory=list)
    """Conversations that did not answer in time: remembered at their close instead."""


async def _ask(client: Client, conversation_id: str) -> RememberNowResult:
    handle = client.get_workflow_handle(names.conversation_workflow_id(conversation_id))
    result: RememberNowResult = await handle.execute_update(
        names.REMEMBER_NOW, RememberNow(reason=REASON), result_type=RememberNowResult
    )
    return result


async def remember_open_conversations(
    settings: Settings, *, timeout_s: float, agent: str | None = None
) -> Remembered:
    """Ask every open conversation (``agent``'s only, if named) to remember now.

    Waits at most ``timeout_s`` in all.
    """
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        conversations = [
            cid for owner, cid in await every_open_conversation(session) if agent in (None, owner)
        ]
    remembered = Remembered()
    if not conversations:
        return remembered
    client = await connect(settings)
    asks = {cid: asyncio.ensure_future(_ask(client, cid)) for cid in conversations}
    await asyncio.wait(asks.values(), timeout=timeout_s)
    for cid, ask in asks.items():
        if not ask.done():
            ask.cancel()
            remembered.unanswered.append(cid)
        elif (error := ask.exception()) is not None:
            if not isinstance(error, RPCError | WorkflowUpdateFailedError):
                raise error
            remembered.unanswered.append(cid)
        elif ask.result().started:
            remembered.started.append(cid)
        else:
            remembered.nothing.append(cid)
    return remembered
