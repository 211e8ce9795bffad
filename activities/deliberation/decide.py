"""The decide step: whether the candidate is transmitted (spec §4 step 6).

Silence is an outcome with a stated reason, never an error.
"""

from __future__ import annotations

from temporalio import activity

from schemas.activation import DecideInput, Decision


def rule_decision(data: DecideInput) -> Decision | None:
    """The verdicts that need no model: an empty candidate, or unaddressed traffic."""
    if not data.candidate.strip():
        return Decision(speak=False, reason="I had nothing to add.")
    if not data.event.addressed:
        return Decision(
            speak=False, reason="The message was not addressed to me and I had nothing to add."
        )
    return None


class DecideActivities:
    """The engagement decision."""

    @activity.defn(name="deliberation.decide")
    async def decide(self, data: DecideInput) -> Decision:
        """Speak unless a rule calls for silence."""
        return rule_decision(data) or Decision(speak=True, reason="Addressed, with a reply.")
