"""Guardrail activities: evaluate the background rules on one exchange, and carry out actions.

``evaluate`` reads the history every rule needs in one pass, runs each rule (one that raises
is logged and skipped: the others still run), and records each firing once per exchange
(the row is the operator's inbox entry). The actions the workflow then takes are activities
of their own, so each is retried on its own: ``notify`` POSTs the configured webhook,
``cool_down`` starts or extends a cooldown. Ending a conversation is a signal the workflow
sends itself.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime

from temporalio import activity

from activities.gateway.gateway import ModelGateway
from activities.guardrails.classify import model_hostility
from activities.guardrails.history import Turn, needs
from activities.guardrails.loading import load_history, stored_turns
from activities.guardrails.patterns import Match, evaluate_all, once_within
from activities.guardrails.webhook import post_firing
from schemas.guardrails import (
    CoolDownInput,
    CoolDownResult,
    GuardrailAction,
    GuardrailEvaluation,
    GuardrailFiring,
    GuardrailInput,
    GuardrailRule,
    GuardrailRuleSet,
    GuardrailSettings,
    NotifySupervisorInput,
    NotifySupervisorResult,
)
from schemas.ids import new_ulid
from store.db import Database
from store.queries import guardrails as queries
from store.tables.guardrails import GuardrailCooldownRow, GuardrailFiringRow

log = logging.getLogger(__name__)


def firing_row(
    rule: GuardrailRule,
    match: Match,
    *,
    agent: str,
    at: datetime,
    person_id: str | None,
    channel_key: str | None,
    conversation_id: str | None,
    activation_id: str | None,
) -> GuardrailFiringRow:
    """The row recording ``rule``'s firing on one exchange."""
    return GuardrailFiringRow(
        id=new_ulid(),
        agent=agent,
        rule_id=rule.id,
        actions=[a.value for a in rule.actions],
        evidence=list(match.evidence),
        summary=match.summary[:500],
        person_id=person_id,
        channel_key=channel_key,
        conversation_id=conversation_id,
        activation_id=activation_id,
        blocking=rule.blocking,
        fired_at=at,
    )


def to_firing(row: GuardrailFiringRow, rule: GuardrailRule | None) -> GuardrailFiring:
    """The wire view of a stored firing (its rule, if the rule set still has it)."""
    return GuardrailFiring(
        firing_id=row.id,
        rule_id=row.rule_id,
        actions=[GuardrailAction(a) for a in row.actions],
        evidence=list(row.evidence),
        summary=row.summary,
        person_id=row.person_id,
        channel_key=row.channel_key,
        conversation_id=row.conversation_id,
        activation_id=row.activation_id,
        cooldown=rule.cooldown if rule is not None else None,
        fired_at=row.fired_at,
    )


def webhook_body(row: GuardrailFiringRow) -> dict[str, object]:
    """What the supervisor's webhook receives for one firing."""
    return {
        "firing_id": row.id,
        "agent": row.agent,
        "rule_id": row.rule_id,
        "summary": row.summary,
        "actions": list(row.actions),
        "evidence": list(row.evidence),
        "person_id": row.person_id,
        "channel": row.channel_key,
        "conversation_id": row.conversation_id,
        "activation_id": row.activation_id,
        "fired_at": row.fired_at.isoformat(),
    }


class GuardrailActivities:
    """Background evaluation and the actions of firings, bound to the store and the rules."""

    def __init__(
        self,
        db: Database,
        rules: GuardrailRuleSet,
        settings: GuardrailSettings,
        gateway: ModelGateway | None = None,
    ) -> None:
        self._db = db
        self._gateway = gateway  # rates hostility for rules that ask (classify)
        self._rules = rules.active(blocking=False)
        self._by_id = {r.id: r for r in rules.rules}
        self._needs = needs(self._rules)
        self._settings = settings

    @activity.defn(name="guardrails.evaluate")
    async def evaluate(self, data: GuardrailInput) -> GuardrailEvaluation:
        """Run the background rules over the exchange's history; record each firing once."""
        now = data.at
        held = await queries.blocking_firings_on(self._db.lane, activation_id=data.activation_id)
        firings = [to_firing(row, self._by_id.get(row.rule_id)) for row in held]
        if not self._rules:
            return GuardrailEvaluation(firings=firings)
        inbound, reply = await stored_turns(self._db.lane, data.inbound_turn_id, data.reply_turn_id)
        history = await load_history(
            self._db.lane,
            needs=self._needs,
            agent=data.agent,
            now=now,
            conversation_id=data.conversation_id,
            channel_key=data.channel.key,
            person_id=data.person_id,
            activation_id=data.activation_id,
            inbound=inbound or Turn(id=data.inbound_turn_id, role="person", text="", at=now),
            reply=reply,
        )
        if self._needs.classify and self._gateway is not None:
            rated = await model_hostility(self._gateway, history.conversation)
            history = replace(history, hostility=rated)
        outcome = evaluate_all(
            self._rules,
            history,
            on_error=lambda rule: log.exception("guardrail rule %s failed; skipped", rule),
        )
        for rule, match in outcome.matches:
            if await self._reported(rule, data):
                continue
            async with self._db.autocommit() as session:
                row = await queries.record_firing(
                    session,
                    row=firing_row(
                        rule,
                        match,
                        agent=data.agent,
                        at=now,
                        person_id=data.person_id,
                        channel_key=data.channel.key,
                        conversation_id=data.conversation_id,
                        activation_id=data.activation_id,
                    ),
                )
            firings.append(to_firing(row, rule))
        return GuardrailEvaluation(firings=firings, failed=outcome.failed)

    async def _reported(self, rule: GuardrailRule, data: GuardrailInput) -> bool:
        """Whether ``rule`` already reported what this exchange shows (the same burst)."""
        standing = once_within(rule)
        if standing is None:
            return False
        window, per = standing
        if per == "person" and data.person_id is None:
            return False
        async with self._db.autocommit() as session:
            reported = await queries.fired_recently(
                session,
                agent=data.agent,
                rule_id=rule.id,
                person_id=data.person_id if per == "person" else None,
                channel_key=data.channel.key,
                since=data.at - window,
                until=data.at,
                # This exchange's own firing, stored by an attempt before a crash, is recorded
                # again (once) so its actions still run.
                other_than=data.activation_id,
            )
        if reported:
            log.info("guardrail %s: already reported within %s; not again", rule.id, window)
        return reported

    @activity.defn(name="guardrails.notify")
    async def notify(self, data: NotifySupervisorInput) -> NotifySupervisorResult:
        """POST the firing to the supervisor's webhook (none configured: nothing to do)."""
        url = self._settings.webhook_url
        if url is None:
            return NotifySupervisorResult()
        async with self._db.session() as session:
            row = await queries.get_firing(session, firing_id=data.firing_id)
        if row is None:
            return NotifySupervisorResult()
        status = await post_firing(
            str(url), webhook_body(row), timeout=self._settings.webhook_timeout_seconds
        )
        async with self._db.session() as session:
            await queries.mark_notified(session, firing_id=row.id, at=datetime.now(UTC))
        return NotifySupervisorResult(delivered=True, status=status)

    @activity.defn(name="guardrails.cool_down")
    async def cool_down(self, data: CoolDownInput) -> CoolDownResult:
        """Start or extend the cooldown a firing asks for."""
        async with self._db.session() as session:
            await queries.set_cooldown(
                session,
                row=GuardrailCooldownRow(
                    agent=data.agent,
                    scope=data.scope,
                    key=data.key,
                    until=data.until,
                    rule_id=data.rule_id,
                    firing_id=data.firing_id,
                ),
            )
        return CoolDownResult(scope=data.scope, key=data.key)
