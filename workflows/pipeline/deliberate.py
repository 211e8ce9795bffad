"""Step: counter-perspective critique and refinement, inline or deferred (spec §4 steps 4-5).

Inline: the refined draft replaces the candidate before the decide step. Deferred: the
candidate goes out as is and deliberation runs in the background after transmission
(:func:`after_transmit`), its conclusion parked for the agent's next turn on the channel.
"""

from __future__ import annotations

from schemas.activation import ActivationInput, Draft, PromptRef


async def deliberate(data: ActivationInput, prompt: PromptRef, draft: Draft) -> Draft:
    """The draft to decide on (unchanged until deliberation is configured)."""
    return draft


async def after_transmit(
    data: ActivationInput, prompt: PromptRef, draft: Draft, transmitted: bool
) -> None:
    """Start deferred deliberation, if any, once the reply is out."""
