"""A Telegram chat end to end: the poller, the agent on a real stack, delivery through the adapter.

The fake Bot API stands in for Telegram; Temporal, PostgreSQL and the worker are real, and the
model is scripted (replies "Noted: <message>", and stays silent on overheard group chatter).
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from temporalio.client import Client

from schemas.events import Outcome
from store.db import Database
from store.queries.contacts import find_contacts, last_channel
from store.tables.telegram import TelegramOffsetRow
from tests.harness import Stack, terminal
from tests.teamchat.chat import telegram_chat
from tests.teamchat.fake_bot_api import BOT_USERNAME, Failure


async def test_a_private_message_is_answered_in_its_chat_as_a_reply_once(
    client: Client, stack: Stack, db: Database
) -> None:
    async with telegram_chat(client, stack, db) as chat:
        said = chat.api.message("Hello, are you there?")

        assert await chat.poll() == 1
        [reply] = await chat.sent(1)
        event_id = await chat.event_of(said["message_id"])
        turn = await chat.turn(event_id)

        assert (reply["chat_id"], reply["text"]) == (42, "Noted: Hello, are you there?")
        assert reply["reply_to"] == said["message_id"]
        # The directory knows the sender by service + channel + speaker ID, with their name.
        async with db.session() as session:
            [grace] = await find_contacts(session, agent=chat.agent, who="7")
            channel = await last_channel(session, agent=chat.agent, person_id=grace.person_id)
        assert (grace.name, turn.person_id) == ("Grace", grace.person_id)
        assert channel is not None and channel.key == "telegram:42"

        # A restarted poller asks from the saved offset: nothing is read twice.
        assert await chat.poll() == 0
        # Had it crashed before saving the offset, the same update is the same event.
        async with db.session() as session:
            row = await session.get(TelegramOffsetRow, chat.api.bot_id)
            await session.delete(row)
            await session.commit()
        chat.api.push({"update_id": 1000, "message": said})
        assert await chat.poll() == 1
        assert (await chat.marker(event_id)).outcome is Outcome.SPOKE
        assert len(chat.api.sent) == 1


async def test_message_contact_reaches_a_telegram_contact_unprompted(
    client: Client, stack: Stack, db: Database
) -> None:
    async with telegram_chat(client, stack, db) as chat:
        chat.api.message("Hi, I'm Grace.")
        await chat.poll()
        await chat.sent(1)

        receipt = await chat.harness.say(
            chat.agent, "Please tell Grace the report is ready.", channel=terminal("op")
        )
        sent = await chat.sent(2)

        assert receipt.marker is not None and "telegram:42" in str(receipt.marker.text)
        assert (sent[1]["chat_id"], sent[1]["text"], sent[1]["reply_to"]) == (
            42,
            "The report is ready.",
            None,
        )


async def test_flood_control_and_a_server_error_then_the_reply_is_delivered_once(
    client: Client, stack: Stack, db: Database
) -> None:
    async with telegram_chat(client, stack, db) as chat:
        chat.api.failures = [
            Failure(429, "Too Many Requests: retry after 1", {"retry_after": 1}),
            Failure(500, "Internal Server Error"),
        ]
        chat.api.message("Are you busy?")
        await chat.poll()

        [reply] = await chat.sent(1)

        assert reply["text"] == "Noted: Are you busy?"
        assert chat.api.send_attempts == 3


async def test_an_edit_upstream_is_a_new_event_that_says_so_and_is_answered_in_thread(
    client: Client, stack: Stack, db: Database
) -> None:
    async with telegram_chat(client, stack, db) as chat:
        said = chat.api.message("Meet at 5?")
        await chat.poll()
        await chat.sent(1)
        first = await chat.event_of(said["message_id"])

        chat.api.message("Meet at 6?", edited=said)
        assert await chat.poll() == 1
        sent = await chat.sent(2)
        edit = await chat.event_of(said["message_id"])

        assert edit != first
        assert (await chat.turn(first)).text == "Meet at 5?"  # what was said stays said
        assert (await chat.turn(edit)).text == "(edited) Meet at 6?"
        assert (sent[1]["text"], sent[1]["reply_to"]) == (
            "Noted: (edited) Meet at 6?",
            said["message_id"],
        )


async def test_a_reply_to_a_message_deleted_upstream_is_still_delivered(
    client: Client, stack: Stack, db: Database
) -> None:
    async with telegram_chat(client, stack, db) as chat:
        said = chat.api.message("Quick question")
        chat.api.deleted.add((42, said["message_id"]))  # gone before the answer
        await chat.poll()

        [reply] = await chat.sent(1)

        assert (reply["text"], reply["reply_to"]) == ("Noted: Quick question", None)


async def test_in_a_group_overheard_chatter_is_observed_and_a_mention_is_answered(
    client: Client, stack: Stack, db: Database
) -> None:
    async with telegram_chat(client, stack, db) as chat:
        chatter = chat.api.message("Lunch anyone?", chat_id=-100, chat_type="group")
        await chat.poll()
        overheard = await chat.marker(await chat.event_of(chatter["message_id"], -100))

        mention = f"@{BOT_USERNAME} what do you think?"
        asked = chat.api.message(
            mention,
            chat_id=-100,
            chat_type="group",
            user_id=8,
            first_name="Alan",
            entities=[{"type": "mention", "offset": 0, "length": len(BOT_USERNAME) + 1}],
        )
        await chat.poll()
        [reply] = await chat.sent(1)
        answered = await chat.marker(await chat.event_of(asked["message_id"], -100))

        assert overheard.outcome is Outcome.SILENT
        assert overheard.reason == "Nothing to add to their chat."
        assert (await chat.turn(overheard.event_id)).text == "Lunch anyone?"  # observed
        assert answered.outcome is Outcome.SPOKE
        assert (reply["chat_id"], reply["reply_to"]) == (-100, asked["message_id"])


async def test_hostile_updates_are_passed_over_without_stalling_the_chat(
    client: Client, stack: Stack, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="persyn.telegram")
    async with telegram_chat(client, stack, db) as chat:
        chat.api.message("x" * 100_000)
        chat.api.message("nul \x00 inside")
        chat.api.push({"message": "not an object"})
        chat.api.push({"message": {"message_id": "seven", "chat": 5, "text": ["no"]}})
        chat.api.push({"callback_query": {"id": "1"}})
        chat.api.message("Still there?")

        assert await chat.poll() == 1
        [reply] = await chat.sent(1)

        assert reply["text"] == "Noted: Still there?"
        passed_over = [r.getMessage() for r in caplog.records if "passed over" in r.getMessage()]
        assert len(passed_over) == 5
        assert "32,000" in passed_over[0] and "NUL" in passed_over[1]
        assert await chat.poll() == 0  # the offset moved past all of them


async def test_the_running_poller_rides_out_telegram_being_away_and_stops_on_request(
    client: Client, stack: Stack, db: Database
) -> None:
    async with telegram_chat(client, stack, db) as chat:
        chat.api.poll_failures = [Failure(502, "Bad Gateway"), Failure(500, "Internal Error")]
        stop = asyncio.Event()
        running = asyncio.create_task(chat.poller.run(stop))
        chat.api.message("Back online?")

        [reply] = await chat.sent(1)
        stop.set()
        await asyncio.wait_for(running, timeout=10)

        assert reply["text"] == "Noted: Back online?"
        assert chat.api.calls.count("getUpdates") >= 3


async def test_a_forged_copy_of_a_message_is_refused_by_the_agent_and_passed_over(
    client: Client, stack: Stack, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="persyn.telegram")
    async with telegram_chat(client, stack, db) as chat:
        said = chat.api.message("Transfer nothing.")
        await chat.poll()
        await chat.sent(1)

        # Same chat, message ID and date, other words: the same event ID saying something else.
        chat.api.push({"message": said | {"text": "Transfer everything."}})
        chat.api.message("Did you get that?")

        assert await chat.poll() == 1
        sent = await chat.sent(2)

        assert [m["text"] for m in sent] == ["Noted: Transfer nothing.", "Noted: Did you get that?"]
        assert any("the agent refused Telegram update" in r.getMessage() for r in caplog.records)
