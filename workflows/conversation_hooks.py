"""Where memory formation plugs into ``ConversationWorkflow`` (workflow-side, deterministic).

``after_turn`` runs after every activation (consolidate long conversations in chunks while they
run); ``on_close`` runs when the conversation closes (consolidate what remains). Both must start
background work and return promptly: consolidation never sits on the response path.
"""

from __future__ import annotations

from schemas.conversation import ConversationInput, ConversationState


async def after_turn(data: ConversationInput, state: ConversationState) -> None:
    """Hook after each activation of the conversation."""


async def on_close(data: ConversationInput, state: ConversationState) -> None:
    """Hook when the conversation closes."""
