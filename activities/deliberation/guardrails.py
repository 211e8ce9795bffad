"""Guardrail hooks of the decide step: checks that may veto a reply, each with its reason.

This is the seam the guardrails of spec §4.10 plug into (patterns over interaction history,
with actions such as blocking a pending reply). A check sees the candidate about to be sent and
returns a veto reason, or ``None`` to let it pass; the first veto wins and the agent stays
silent with that reason. Workers run no checks by default (``Dependencies.guardrails``).

A check that raises is a bug in the check: by default it is logged and passes (fail soft, like
every optional subsystem); a check that guards something that must never slip through sets
``fail_closed`` and its failure vetoes instead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from schemas.deliberation import ScreenInput

log = logging.getLogger(__name__)


class GuardrailCheck(Protocol):
    """One guardrail check run before every transmission."""

    name: str
    fail_closed: bool

    async def check(self, data: ScreenInput) -> str | None:
        """A veto reason (first person, shown to the person), or ``None`` to let it pass."""
        ...


@dataclass(frozen=True)
class Veto:
    """Which check vetoed, and why."""

    check: str
    reason: str


async def first_veto(checks: Sequence[GuardrailCheck], data: ScreenInput) -> Veto | None:
    """Run ``checks`` in order; the first veto, or ``None`` when every check passes."""
    for check in checks:
        try:
            reason = await check.check(data)
        except Exception:
            log.exception("guardrail %s failed", check.name)
            if not check.fail_closed:
                continue
            reason = "I held this reply back because a safety check could not run."
        if reason:
            return Veto(check=check.name, reason=reason.strip()[:500])
    return None
