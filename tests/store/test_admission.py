"""The conversation row decides between an admitted turn and a close, in either order."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from store.queries.admission import Window, _window_on, admit_turn, close_if_settled
from store.tables import Conversation, DialogTurnRow
from tests.harness import Harness

CHANNEL = ChannelRef(service="team", channel="general")


def turn(conversation_id: str, text: str) -> DialogTurn:
    return DialogTurn(
        turn_id=new_ulid(),
        conversation_id=conversation_id,
        role=Role.PERSON,
        speaker_id=new_ulid(),
        speaker_name="Una",
        text=text,
        at=datetime.now(UTC),
    )


async def admit(harness: Harness, agent: str, said: DialogTurn, *, opening: bool) -> Window | None:
    return await admit_turn(
        harness.db, agent=agent, channel=CHANNEL, turn=said, opening=opening, window_turns=40
    )


async def close(harness: Harness, conversation_id: str, last_input: str | None) -> bool:
    async with harness.db.session() as session:
        return await close_if_settled(
            session,
            conversation_id=conversation_id,
            closed_at=datetime.now(UTC),
            reason="idle",
            last_input=last_input,
        )


async def test_admission_opens_writes_and_reads_the_window_once_per_turn(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    conversation = new_ulid()
    first = turn(conversation, "hello")
    window = await admit(harness, agent, first, opening=True)
    again = await admit(harness, agent, first, opening=True)  # a retried attempt
    second = turn(conversation, "and again")
    later = await admit(harness, agent, second, opening=False)

    assert window is not None and window.turn_ids == [first.turn_id]
    assert again is not None and again.turn_ids == [first.turn_id]
    assert later is not None and later.turn_ids == [first.turn_id, second.turn_id]
    assert later.participants == [first.speaker_id, second.speaker_id]
    async with harness.db.session() as session:
        row = await session.get(Conversation, conversation)
        assert row is not None and row.turns == 2 and row.status == "open"


async def test_a_closed_conversation_takes_no_turn(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    conversation = new_ulid()
    first = turn(conversation, "hello")
    await admit(harness, agent, first, opening=True)
    assert await close(harness, conversation, first.turn_id)

    late = turn(conversation, "too late")
    assert await admit(harness, agent, late, opening=False) is None
    async with harness.db.session() as session:
        assert await session.get(DialogTurnRow, late.turn_id) is None


async def test_a_close_is_refused_while_a_turn_it_never_heard_of_was_admitted(
    harness: Harness,
) -> None:
    agent = (await harness.create_agent()).handle
    conversation = new_ulid()
    first = turn(conversation, "hello")
    await admit(harness, agent, first, opening=True)
    unheard = turn(conversation, "one more thing")
    await admit(harness, agent, unheard, opening=False)

    assert not await close(harness, conversation, first.turn_id)
    async with harness.db.session() as session:
        row = await session.get(Conversation, conversation)
        assert row is not None and row.status == "open"
    assert await close(harness, conversation, unheard.turn_id)
    assert await close(harness, conversation, unheard.turn_id)  # already closed counts


async def test_racing_admissions_and_a_close_never_lose_a_turn(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    conversation = new_ulid()
    first = turn(conversation, "hello")
    await admit(harness, agent, first, opening=True)
    racing = [turn(conversation, f"turn {i}") for i in range(6)]
    results = await asyncio.gather(
        close(harness, conversation, first.turn_id),
        *(admit(harness, agent, t, opening=False) for t in racing),
    )
    closed, admitted = results[0], results[1:]
    async with harness.db.session() as session:
        row = await session.get(Conversation, conversation)
        stored = {t.turn_id for t in racing if await session.get(DialogTurnRow, t.turn_id)}
    assert row is not None
    # Every turn was either admitted (and stored) or refused (and stored nowhere).
    assert stored == {t.turn_id for t, w in zip(racing, admitted, strict=True) if w is not None}
    # A close that won was not preceded by an admitted turn it never heard of.
    assert closed == (row.status == "closed")
    if closed:
        assert not stored


async def test_a_task_run_again_adopts_the_conversation_its_first_attempt_admitted_to(
    harness: Harness,
) -> None:
    # A workflow task that never completed named a fresh conversation from its own time and
    # admitted the turn there; the task run again names another one for the same turn.
    agent = (await harness.create_agent()).handle
    first_attempt = turn(new_ulid(), "hello")
    await admit(harness, agent, first_attempt, opening=True)
    again = first_attempt.model_copy(update={"conversation_id": new_ulid()})
    window = await admit(harness, agent, again, opening=True)

    assert window is not None and window.conversation_id == first_attempt.conversation_id
    assert window.turn_ids == [first_attempt.turn_id]
    async with harness.db.session() as session:
        assert await session.get(Conversation, again.conversation_id) is None


async def test_the_opening_turns_come_apart_once_the_window_no_longer_holds_them(
    harness: Harness,
) -> None:
    agent = (await harness.create_agent()).handle
    conversation = new_ulid()
    said = [turn(conversation, f"turn {n}") for n in range(6)]
    windows = []
    for n, each in enumerate(said):
        windows.append(
            await admit_turn(
                harness.db,
                agent=agent,
                channel=CHANNEL,
                turn=each,
                opening=n == 0,
                window_turns=3,
                opening_turns=2,
            )
        )
    ids = [t.turn_id for t in said]

    assert windows[2] is not None and windows[2].opening_ids == []  # the window holds them
    assert windows[3] is not None and windows[3].opening_ids == ids[:1]  # one slid out
    last = windows[5]
    assert last is not None and last.turn_ids == ids[3:] and last.opening_ids == ids[:2]


async def test_an_attempt_run_again_into_a_recorded_conversation_counts_the_turn_once(
    harness: Harness,
) -> None:
    # The one-statement path finds the turn already stored and leaves it to the transaction.
    agent = (await harness.create_agent()).handle
    conversation = new_ulid()
    first = turn(conversation, "hello")
    await admit(harness, agent, first, opening=True)
    second = turn(conversation, "again")
    window = await admit(harness, agent, second, opening=False)
    retried = await admit(harness, agent, second, opening=False)

    assert window is not None and retried is not None
    assert retried.turn_ids == window.turn_ids == [first.turn_id, second.turn_id]
    async with harness.db.session() as session:
        row = await session.get(Conversation, conversation)
        assert row is not None and row.turns == 2


async def test_a_turn_from_a_channel_never_recorded_is_admitted_through_the_transaction(
    harness: Harness,
) -> None:
    agent = (await harness.create_agent()).handle
    conversation = new_ulid()
    await admit(harness, agent, turn(conversation, "hello"), opening=True)
    elsewhere = turn(conversation, "from a channel no speaker was resolved on")
    window = await admit_turn(
        harness.db,
        agent=agent,
        channel=ChannelRef(service="team", channel="never-seen"),
        turn=elsewhere,
        opening=False,
        window_turns=40,
    )

    assert window is not None and window.turn_ids[-1] == elsewhere.turn_id
    async with harness.db.session() as session:
        assert await session.get(DialogTurnRow, elsewhere.turn_id) is not None


async def test_the_lane_window_ends_at_the_turn_admitted(harness: Harness) -> None:
    # Read after the commit: a turn written later is not in this turn's window.
    agent = (await harness.create_agent()).handle
    conversation = new_ulid()
    said = [turn(conversation, f"turn {n}") for n in range(4)]
    for n, each in enumerate(said):
        await admit(harness, agent, each, opening=n == 0)
    window = await _window_on(harness.db.lane, turn=said[1], window_turns=40, opening_turns=0)

    assert window.turn_ids == [said[0].turn_id, said[1].turn_id]
    assert window.participants == [each.speaker_id for each in said]
