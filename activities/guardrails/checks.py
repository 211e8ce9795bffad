"""Guardrail checks for the decide screen: cooldowns in force, and the blocking rules.

Both plug into :mod:`activities.deliberation.guardrails`' seam, so a veto is silence with a
reason, and a check that raises passes (fail soft) unless it is marked ``fail_closed``.

- :class:`CooldownCheck` keeps the agent silent towards a person, or on a channel, while a
  firing's cooldown lasts.
- :class:`BlockingRuleCheck` runs one rule marked ``blocking`` on the candidate reply and the
  history behind it; when it fires it holds the reply back and is recorded, like a background
  firing, with the activation it stopped (from the run's attribution).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from activities.guardrails.activities import firing_row
from activities.guardrails.history import Turn, needs
from activities.guardrails.loading import load_history
from activities.guardrails.patterns import evaluate_all
from contract import attribution
from schemas.deliberation import ScreenInput
from schemas.guardrails import GuardrailRule
from store.db import Database
from store.lane import Lane
from store.queries import guardrails as queries

log = logging.getLogger(__name__)

COOLING_DOWN = "I'm taking a break from this conversation for a while."


async def speaker_person(lane: Lane, data: ScreenInput) -> str | None:
    """The speaker's person: as admission resolved it, else (older inputs) looked up."""
    if data.person_id is not None:
        return data.person_id
    event = data.event
    return await queries.person_of_speaker(
        lane,
        agent=data.agent,
        service=event.channel.service,
        channel=event.channel.channel,
        speaker_id=event.speaker.speaker_id,
    )


class CooldownCheck:
    """Silence while a cooldown on the speaker (as a person) or the channel is in force."""

    name = "cooldown"
    fail_closed = False

    def __init__(self, db: Database) -> None:
        self._db = db

    async def check(self, data: ScreenInput) -> str | None:
        """The cooldown's reason while one is in force, else ``None``."""
        person = await speaker_person(self._db.lane, data)
        keys = [("channel", data.channel.key)]
        if person is not None:
            keys.insert(0, ("person", person))
        row = await queries.active_cooldown(
            self._db.lane, agent=data.agent, keys=keys, now=datetime.now(UTC)
        )
        if row is None:
            return None
        return f"{COOLING_DOWN} (guardrail {row.rule_id}, until {row.until:%Y-%m-%d %H:%M} UTC)"


class BlockingRuleCheck:
    """One rule marked ``blocking``, run on the candidate before it is sent.

    One check per rule, named after it, so the veto names the rule (the activation's
    ``PersynGuardrails`` search attribute) and each reads only the history it needs.
    """

    fail_closed = False

    def __init__(self, db: Database, rule: GuardrailRule) -> None:
        self.name = rule.id
        self._db = db
        self._rules = [rule]
        self._needs = needs(self._rules)

    async def check(self, data: ScreenInput) -> str | None:
        """The rule's message when it fires (recorded), else ``None``."""
        if not self._rules or not data.candidate.strip():
            return None
        who = attribution.current()
        now = datetime.now(UTC)
        event = data.event
        person = await speaker_person(self._db.lane, data)
        history = await load_history(
            self._db.lane,
            needs=self._needs,
            agent=data.agent,
            now=now,
            conversation_id=who.conversation,
            channel_key=data.channel.key,
            person_id=person,
            activation_id=who.activation,
            inbound=Turn(
                id=event.event_id, role="person", text=event.text, at=now, person_id=person
            ),
            reply=Turn(
                id=data.draft_id or event.event_id, role="agent", text=data.candidate, at=now
            ),
        )
        outcome = evaluate_all(
            self._rules,
            history,
            on_error=lambda rule: log.exception("blocking guardrail %s failed; passed", rule),
        )
        if not outcome.matches:
            return None
        rule, match = outcome.matches[0]
        async with self._db.autocommit() as session:
            await queries.record_firing(
                session,
                row=firing_row(
                    rule,
                    match,
                    agent=data.agent,
                    at=now,
                    person_id=person,
                    channel_key=data.channel.key,
                    conversation_id=who.conversation,
                    activation_id=who.activation,
                ),
            )
        return rule.message
