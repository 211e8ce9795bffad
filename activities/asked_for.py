"""What a person asks for in so many words, carried out by the platform at admission.

Five requests are met without the model, before the prompt that answers them is built:

- "please remember ..." is kept as a quick fact about the person (``activities.memory.explicit``),
  on every plan;
- "remind me to ... in 10 minutes" sets a reminder for the person, sent to them on this channel
  when it fires (``activities.scheduling.asked``), on plans that offer the model no tools (where
  the model cannot set one itself, and a plan with tools would set it twice);
- "what do you know about me?" is answered from the person's quick facts
  (``activities.memory.about_me``), on plans that confirm without the model (the tiny model
  ignores the facts in its prompt);
- "what have we been up to?" is answered from the agent's recollections of the person on this
  channel, each stretch at its highest level (``activities.memory.catch_up``), on the same plans;
- "what time is it?" is answered from the clock (``activities.context.clock``) on the same
  plans, instead of the model: SmolLM2, shown the time, answered "20.48:53" at 14:00.

Each says what was done twice (``schemas.activation.DoneForThem``): a note for the prompt, so
the model tells them, and a line for the person, which plans that confirm without the model
add to the reply itself.
Every step is idempotent, so an admission attempt run again changes nothing twice: the fact's
key is its words', the reminder's ID is derived from the event's.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from zoneinfo import ZoneInfo

from temporalio import activity

from activities.context.clock import asks_the_time, friendly_now
from activities.memory.about_me import asks_what_i_know, what_i_know
from activities.memory.catch_up import asks_what_we_did, stretches, what_we_did
from activities.memory.explicit import keep_requested_fact
from activities.scheduling.asked import AskedReminder, asked_reminder
from activities.scheduling.reminders import ReminderError, Reminders
from schemas.activation import DoneForThem
from schemas.admission import AdmitInput
from schemas.autonomy import SELF_SERVICE
from schemas.events import Trigger
from schemas.ids import ulid_from_parts, ulid_time
from schemas.peers import AGENT_SERVICE
from store.db import Database
from store.queries.agents import get_agent
from store.queries.goals import get_facts
from store.queries.memory import with_person

MEMORIES_QUOTED = 2
"""Memories of the person quoted when they ask what the agent knows about them."""
STRETCHES_TOLD = 3
"""Recollections told when they ask what they have been up to (and up to two newer memories)."""
STRETCHES_LOOKED_AT = 40
"""The newest unfolded records read to find them."""


def reminder_id_for(event_id: str) -> str:
    """The ID of the reminder an event asked for: the same on every attempt."""
    digest = hashlib.sha256(f"asked-reminder:{event_id}".encode()).digest()
    return ulid_from_parts(ulid_time(event_id), int.from_bytes(digest[:10], "big"))


def when_line(at: datetime, timezone: str) -> str:
    """A reminder's time for people: '17:00 on Fri 4 Dec 2026 (Europe/Paris)'."""
    local = at.astimezone(ZoneInfo(timezone))
    return f"{local:%H:%M} on {local:%a} {local.day} {local:%b %Y} ({timezone})"


class AskedFor:
    """Carries out what the person asked for in words; returns what was done, a line each.

    Args:
        db: The store.
        fact_limit: Quick facts a person may have; 0 leaves "please remember" to the model.
        reminders: Sets reminders; ``None`` leaves "remind me" to the model (a plan with tools).
        answer_what_i_know: Answer "what do you know about me?" from the quick facts, and
            "what time is it?" from the clock.
    """

    def __init__(
        self,
        db: Database,
        *,
        fact_limit: int,
        reminders: Reminders | None,
        answer_what_i_know: bool = False,
    ) -> None:
        self._db = db
        self._fact_limit = fact_limit
        self._reminders = reminders
        self._answer_what_i_know = answer_what_i_know

    async def carry_out(self, data: AdmitInput, person_id: str) -> list[DoneForThem]:
        """What ``data``'s event asked for, done; never raises (the turn goes on without it)."""
        event = data.event
        if event.trigger is not Trigger.MESSAGE or event.channel.service in (
            SELF_SERVICE,
            AGENT_SERVICE,
        ):
            return []
        steps = [self._fact_kept(data, person_id), self._set_reminder(data, person_id)]
        if self._answer_what_i_know and asks_what_i_know(event.text):
            steps.append(self._what_i_know(data, person_id))
        if self._answer_what_i_know and asks_what_we_did(event.text):
            steps.append(self._what_we_did(data, person_id))
        if self._answer_what_i_know and asks_the_time(event.text):
            steps.append(self._the_time(data))
        done: list[DoneForThem] = []
        for step in steps:
            try:
                result = await step
            except Exception as err:  # the turn is written: the reply goes on without it
                activity.logger.warning("could not carry out what the person asked: %s", err)
                continue
            if result is not None:
                done.append(result)
        return done

    async def _fact_kept(self, data: AdmitInput, person_id: str) -> DoneForThem | None:
        fact = await self._keep_fact(data, person_id)
        if fact is None:
            return None
        return DoneForThem(
            note=f'Kept, as they asked you to remember: "{fact}".',
            confirmation=f'Noted: you asked me to remember "{fact}".',
        )

    async def _what_i_know(self, data: AdmitInput, person_id: str) -> DoneForThem:
        # Memories of this channel only: what the person said elsewhere stays there.
        async with self._db.autocommit() as session:
            facts = await get_facts(session, agent=data.agent, subjects=[person_id])
            memories = await with_person(
                session,
                agent=data.agent,
                channel_key=data.event.channel.key,
                person_id=person_id,
                limit=MEMORIES_QUOTED,
            )
        answer = what_i_know(facts, [memory.summary for memory in memories])
        # The answer is the whole reply: beside it, the recollection check replaced the tiny
        # model's words with "I don't remember that", which its own answer then contradicted.
        return DoneForThem(
            note=f"They asked what you know about them. From your notes: {answer}",
            confirmation=answer,
            answers=True,
        )

    async def _what_we_did(self, data: AdmitInput, person_id: str) -> DoneForThem:
        async with self._db.autocommit() as session:
            tops = await with_person(
                session,
                agent=data.agent,
                channel_key=data.event.channel.key,
                person_id=person_id,
                limit=STRETCHES_LOOKED_AT,
                tops=True,
            )
        answer = what_we_did(stretches(tops, most=STRETCHES_TOLD))
        # The answer is the whole reply: the tiny model's words beside it contradicted it.
        return DoneForThem(
            note=f"They asked what you have been up to together. From your memories: {answer}",
            confirmation=answer,
            answers=True,
        )

    async def _the_time(self, data: AdmitInput) -> DoneForThem:
        async with self._db.autocommit() as session:
            agent = await get_agent(session, handle=data.agent)
        now = friendly_now(data.at, agent.config.timezone if agent is not None else "UTC")
        return DoneForThem(note=f"They asked for the time. {now}", confirmation=now, answers=True)

    async def _keep_fact(self, data: AdmitInput, person_id: str) -> str | None:
        if not self._fact_limit:
            return None
        return await keep_requested_fact(
            self._db,
            agent=data.agent,
            person_id=person_id,
            text=data.event.text,
            at=data.at,
            limit=self._fact_limit,
        )

    async def _set_reminder(self, data: AdmitInput, person_id: str) -> DoneForThem | None:
        if self._reminders is None or "remind" not in data.event.text.lower():
            return None
        async with self._db.autocommit() as session:
            agent = await get_agent(session, handle=data.agent)
        timezone = agent.config.timezone if agent is not None else "UTC"
        asked = asked_reminder(data.event.text, now=data.at, timezone=timezone)
        if asked is None:
            return None
        return await self._create(data, person_id, asked, timezone)

    async def _create(
        self, data: AdmitInput, person_id: str, asked: AskedReminder, timezone: str
    ) -> DoneForThem:
        assert self._reminders is not None
        try:
            reminder = await self._reminders.create(
                agent=data.agent,
                objective=asked.objective,
                now=data.at,
                task_queue=activity.info().task_queue,
                at=asked.at,
                timezone=timezone,
                created_in=data.activation_id,
                reminder_id=reminder_id_for(data.event.event_id),
                for_person=person_id,
                for_channel=data.event.channel.key,
            )
        except ReminderError as err:
            return DoneForThem(
                note=f'They asked to be reminded ("{asked.objective}"); it was not set: {err}.',
                confirmation=f"I could not set that reminder: {err}.",
            )
        except Exception as err:  # Temporal or the store failed: say so rather than nothing
            activity.logger.warning("a reminder asked for in words was not set: %s", err)
            return DoneForThem(
                note=f'They asked to be reminded ("{asked.objective}"); setting it failed.',
                confirmation="I could not set that reminder just now: please ask me again.",
            )
        assert reminder.at is not None
        when = when_line(reminder.at, timezone)
        return DoneForThem(
            note=f'Reminder set, as they asked: at {when} they will be sent "{reminder.objective}" '
            "on this channel.",
            confirmation=f'Reminder set: at {when} I will send you "{reminder.objective}" here.',
        )
