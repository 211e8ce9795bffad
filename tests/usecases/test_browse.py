"""Browsing an agent's conversations: each agent reads only its own, read-only."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.ids import InvalidIdError, new_ulid
from tests.harness import Stack, running_worker, terminal
from usecases.browse import NoSuchConversationError, channel_conversations, conversation_dialog
from usecases.errors import UnknownAgentError


async def test_a_conversation_is_read_by_its_own_agent_only(client: Client, stack: Stack) -> None:
    rules = [ScriptRule(task="respond", reply="Heard: {last}")]
    async with running_worker(client, stack, rules=rules) as harness:
        ada = (await harness.create_agent()).handle
        bo = (await harness.create_agent()).handle
        said = await harness.say(ada, "the blue door", channel=terminal("browse"))
        await harness.say(bo, "the red door", channel=terminal("browse"))
        settings = stack.settings()
        [listed] = await channel_conversations(
            settings=settings, agent=ada, channel_key="terminal:browse"
        )
        turns = await conversation_dialog(
            settings=settings, agent=ada, conversation_id=listed.conversation_id
        )
        with pytest.raises(NoSuchConversationError, match=f"is not one of {bo}'s"):
            await conversation_dialog(
                settings=settings, agent=bo, conversation_id=listed.conversation_id
            )
        with pytest.raises(NoSuchConversationError):
            await conversation_dialog(settings=settings, agent=ada, conversation_id=new_ulid())
        for hostile in ("", "x\x00y", "01JD3M6Z8Q4N1V5X7B2C9E0F1G' OR 1=1", "é" * 26):
            with pytest.raises(InvalidIdError):
                await conversation_dialog(settings=settings, agent=ada, conversation_id=hostile)
        with pytest.raises(UnknownAgentError):
            await channel_conversations(
                settings=settings, agent="nobody-here", channel_key="terminal:browse"
            )

    assert said.marker is not None and listed.conversation_id == said.marker.conversation_id
    assert [(t.speaker_name, t.text) for t in turns] == [
        ("Ada", "the blue door"),
        ("Persyn Test", "Heard: the blue door"),
    ]
