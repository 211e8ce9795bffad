"""The conversation's order is the order inputs arrived in, never the order of their event IDs.

A person turn's ID is the client's event ULID, and a client sets its time part. A burst from
several senders, one future-dated and one past-dated, must still reach the prompt, the window
and the stored dialog in arrival order, each message paired with its own reply, none twice.
"""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

from sqlmodel import col, select

from contract import names
from schemas.conversation import WindowAnswer, WindowQuery
from schemas.dialog import Role
from schemas.events import Outcome, Receipt
from schemas.ids import new_ulid, ulid_from_parts
from store.queries.dialog import conversation_turns
from store.tables import PromptRow
from tests.harness import Harness, event, until

SENDERS = {
    "ann": "Ann asks about apples",
    "bob": "Bob asks about boats",
    "cleo": "Cleo asks about clouds",
    "dev": "Dev asks about deserts",
    "eve": "Eve asks about engines",
}


def _event_ids() -> dict[str, str]:
    now = datetime.now(UTC)
    dated = {
        "ann": now + timedelta(days=1),  # claims to come from tomorrow
        "bob": now - timedelta(days=30),  # and this one from last month
    }
    return {
        sender: ulid_from_parts(dated[sender], random.getrandbits(80))
        if sender in dated
        else new_ulid()
        for sender in SENDERS
    }


async def _window(harness: Harness, conversation_id: str) -> WindowAnswer:
    handle = harness.client.get_workflow_handle(names.conversation_workflow_id(conversation_id))
    answer = await handle.query(names.WINDOW, WindowQuery(), result_type=WindowAnswer)
    assert isinstance(answer, WindowAnswer)
    return answer


async def _settled(harness: Harness, conversation_id: str, *, turns: int) -> bool:
    return len((await _window(harness, conversation_id)).window) == turns


async def _respond_prompt(harness: Harness, activation_id: str) -> PromptRow:
    async with harness.db.session() as session:
        rows = await session.exec(
            select(PromptRow)
            .where(PromptRow.activation_id == activation_id, PromptRow.task == "respond")
            .order_by(col(PromptRow.created_at))
        )
        found = rows.first()
    assert found is not None, f"no respond prompt for {activation_id}"
    return found


def _asked(text: str) -> list[str]:
    """Which senders' messages ``text`` holds."""
    return [sender for sender, said in SENDERS.items() if said in text]


async def test_a_dated_burst_keeps_arrival_order_and_pairs_each_reply(harness: Harness) -> None:
    agent = await harness.create_agent()
    # One sender first, so the burst lands in one open conversation.
    opener = await harness.say(agent.handle, "Hello, everyone is coming.", speaker="host")
    assert opener.marker is not None and opener.marker.conversation_id is not None
    ids = _event_ids()
    receipts: list[Receipt] = await asyncio.gather(
        *(
            harness.send(agent.handle, event(text, speaker=sender, event_id=ids[sender]))
            for sender, text in SENDERS.items()
        )
    )

    # Each reply answers its own message, and nobody else's.
    for sender, receipt in zip(SENDERS, receipts, strict=True):
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        assert _asked(receipt.marker.text or "") == [sender], (sender, receipt.marker.text)
        assert receipt.marker.conversation_id == opener.marker.conversation_id

    # The window is the conversation in arrival order: person, own reply, person, own reply.
    conversation = opener.marker.conversation_id
    # A receipt comes back when the reply is out; the conversation takes the reply a moment later.
    await until(lambda: _settled(harness, conversation, turns=2 + 2 * len(SENDERS)))
    window = (await _window(harness, conversation)).window
    people = [t for t in window if t.role is Role.PERSON]
    arrival = [sender for t in people for sender in _asked(t.text)]
    assert sorted(arrival) == sorted(SENDERS)  # every input once, none twice
    for asked, answer in zip(window[2::2], window[3::2], strict=True):
        assert asked.role is Role.PERSON and answer.role is Role.AGENT
        assert _asked(answer.text) == _asked(asked.text)

    # The stored dialog is in the same order as the window.
    async with harness.db.session() as session:
        stored = await conversation_turns(session, conversation_id=conversation)
    assert [t.turn_id for t in stored] == [t.turn_id for t in window]

    # Each prompt holds the conversation so far in arrival order, its own input last, once.
    by_sender = dict(zip(SENDERS, receipts, strict=True))
    for position, sender in enumerate(arrival):
        marker = by_sender[sender].marker
        assert marker is not None and marker.activation_id is not None
        prompt = await _respond_prompt(harness, marker.activation_id)
        said = [s for m in prompt.messages if m["role"] == "user" for s in _asked(m["content"])]
        assert said == arrival[: position + 1], (sender, said)
        last = prompt.messages[-1]
        assert last["role"] == "user" and _asked(last["content"]) == [sender]
        answered = [
            s for m in prompt.messages if m["role"] == "assistant" for s in _asked(m["content"])
        ]
        assert answered == arrival[:position]
