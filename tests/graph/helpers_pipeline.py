"""Talking until a conversation closes, so its background work has run."""

from __future__ import annotations

from contract import names
from tests.harness import Harness


async def converse(harness: Harness, agent: str, text: str) -> None:
    """Say ``text`` and wait for the conversation to close on idle (its closing work awaited)."""
    receipt = await harness.say(agent, text)
    assert receipt.marker and receipt.marker.conversation_id
    handle = harness.client.get_workflow_handle(
        names.conversation_workflow_id(receipt.marker.conversation_id)
    )
    await handle.result()
