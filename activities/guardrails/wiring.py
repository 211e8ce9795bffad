"""The guardrails a worker runs, built from settings: the screen's checks and the activities.

A rules file that does not load stops the worker with its problems (line and reason), as a
broken configuration should: running without the guardrails an operator wrote would be
silent. With guardrails disabled there are no rules, but the cooldown check stays, so a
cooldown set earlier still holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from activities.deliberation.guardrails import GuardrailCheck
from activities.gateway.gateway import ModelGateway
from activities.guardrails.activities import GuardrailActivities
from activities.guardrails.checks import BlockingRuleCheck, CooldownCheck
from activities.guardrails.rules import configured_rules
from schemas.guardrails import GuardrailSettings
from store.db import Database


@dataclass(frozen=True)
class Guardrails:
    """What the worker registers: checks for the decide screen, and the background activities."""

    checks: list[GuardrailCheck]
    activities: GuardrailActivities


def build_guardrails(
    db: Database, settings: GuardrailSettings, gateway: ModelGateway | None = None
) -> Guardrails:
    """The configured rules as screen checks and background activities.

    ``gateway`` rates hostility for escalation rules that ask the model (``classify``).

    Raises:
        RulesError: The configured rules file is missing or invalid.
    """
    rules = configured_rules(settings)
    checks: list[GuardrailCheck] = [CooldownCheck(db)]
    checks.extend(BlockingRuleCheck(db, rule) for rule in rules.active(blocking=True))
    return Guardrails(checks=checks, activities=GuardrailActivities(db, rules, settings, gateway))
