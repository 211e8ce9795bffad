"""Folds, detaches and channel groups seen through real turns: what recall lets a person see.

A private memory is recalled only with the people who shared it present. One human on two
channels is two records until the operator folds them, so before the fold the memory stays
hidden from the second record, and after it the same human is recognised on both channels.
"""

from __future__ import annotations

from sqlalchemy import text

from activities.memory.encoders.local import LocalEncoder
from schemas.events import ChannelRef, Outcome
from store.db import Database
from store.queries import channel_groups, directory
from tests.contacts.conftest import MET
from tests.harness import Harness, terminal
from tests.memory.recall.records import add_channel, add_memory
from tests.memory.recall.turns import QUESTION, SUMMARY, respond_prompt
from usecases.contacts import tell_open_conversations

HOME = terminal("home")
WORK = terminal("work")


async def person(db: Database, agent: str, channel: ChannelRef, speaker: str = "ada") -> str:
    async with db.session() as session:
        row = await (await session.connection()).execute(
            text(
                "SELECT person_id FROM identities WHERE agent = :a AND service = :s "
                "AND channel = :c AND speaker_id = :sp"
            ),
            {"a": agent, "s": channel.service, "c": channel.channel, "sp": speaker},
        )
        return str(row.scalar_one())


async def remember(db: Database, encoder: LocalEncoder, agent: str, with_: str) -> str:
    """A private memory formed on HOME with one person."""
    channel_id = await add_channel(db, agent, HOME)
    [vector] = await encoder.encode([SUMMARY])
    return await add_memory(
        db,
        agent=agent,
        channel_id=channel_id,
        summary=SUMMARY,
        vector=vector,
        embed_model=encoder.name,
        participants=[with_],
    )


async def recalled(harness: Harness, agent: str, channel: ChannelRef) -> bool:
    receipt = await harness.say(agent, QUESTION, channel=channel)
    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    return SUMMARY in (await respond_prompt(harness.db, receipt)).system


async def group(db: Database, agent: str, *channels: ChannelRef) -> None:
    for channel in channels:
        async with db.session() as session:
            await channel_groups.group_channel(session, agent=agent, channel=channel, group="ada")


async def test_fold_then_recall_across_channels_then_detach(
    harness: Harness, encoder: LocalEncoder
) -> None:
    db = harness.db
    agent = (await harness.create_agent()).handle
    await harness.say(agent, "Hello from home!", channel=HOME)
    await harness.say(agent, "Hello from work!", channel=WORK)
    at_home, at_work = await person(db, agent, HOME), await person(db, agent, WORK)
    assert at_home != at_work
    await remember(db, encoder, agent, with_=at_home)
    await group(db, agent, HOME, WORK)

    # Two records: the memory shared with the home record stays hidden from the work one.
    assert not await recalled(harness, agent, WORK)

    async with db.session() as session:
        folded = await directory.fold_contacts(
            session, agent=agent, folded=at_work, survivor=at_home, name="Ada", by="op", at=MET
        )
    # The open conversation at work still counts the old record among who is present.
    assert len(folded.open_conversations) == 1
    assert await tell_open_conversations(harness.client, folded) == 1
    assert await person(db, agent, WORK) == at_home
    assert await recalled(harness, agent, WORK)

    async with db.session() as session:
        await directory.detach_identity(session, agent=agent, channel=WORK, speaker_id="ada")
    assert not await recalled(harness, agent, WORK)
    newcomer = await person(db, agent, WORK)
    assert newcomer != at_home
    # History stays where it formed: Ada's earlier turns at work are still hers.
    async with db.session() as session:
        owners = await (await session.connection()).execute(
            text(
                "SELECT DISTINCT t.person_id FROM dialog_turns t JOIN channels c "
                "ON c.id = t.channel_id WHERE t.agent = :a AND c.key = :k AND t.role = 'person'"
            ),
            {"a": agent, "k": WORK.key},
        )
        assert {r[0] for r in owners} == {at_home, newcomer}


async def test_a_channel_group_shares_memory(harness: Harness, encoder: LocalEncoder) -> None:
    db = harness.db
    agent = (await harness.create_agent()).handle
    await harness.say(agent, "Hello from home!", channel=HOME)
    ada = await person(db, agent, HOME)
    async with db.session() as session:
        await directory.attach_identity(
            session, agent=agent, who=ada, channel=WORK, speaker_id="ada"
        )
    await remember(db, encoder, agent, with_=ada)

    # The same person, but each channel keeps its own memory until they are grouped.
    assert not await recalled(harness, agent, WORK)
    assert await person(db, agent, WORK) == ada
    await group(db, agent, HOME, WORK)
    assert await recalled(harness, agent, WORK)
