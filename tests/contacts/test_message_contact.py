"""``message_contact`` goes to the channel the contact prefers, else the one last used with them."""

from __future__ import annotations

import json
from typing import Any

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from schemas.events import ChannelRef
from store.queries import directory
from tests.autonomy.conftest import autonomy_worker, tool_calls
from tests.harness import Harness, Stack, terminal

DESK = ChannelRef(service="terminal", channel="desk")
TELL_ADA = ScriptRule(
    task="respond",
    match="tell ada",
    after_tool=False,
    tool_calls=[
        ScriptToolCall(
            name="message_contact", arguments={"contact": "ada", "text": "Bob says hello."}
        )
    ],
)
AFTER_TOOL = ScriptRule(task="respond", after_tool=True, reply="Done: {tool}")


async def sent_to(harness: Harness, agent: str) -> str:
    receipt = await harness.say(
        agent, "Please tell Ada I said hello.", speaker="bob", channel=terminal("b")
    )
    assert receipt.marker is not None
    [call] = await tool_calls(harness, str(receipt.marker.activation_id))
    result: dict[str, Any] = json.loads(str(call.result))
    return str(result["channel"])


async def test_the_preferred_channel_wins_over_the_latest(client: Client, stack: Stack) -> None:
    async with autonomy_worker(client, stack, rules=[AFTER_TOOL, TELL_ADA]) as harness:
        agent = (await harness.create_agent()).handle
        await harness.say(agent, "Hi, I'm Ada.")  # Ada on terminal:tty
        async with harness.db.session() as session:
            await directory.attach_identity(
                session, agent=agent, who="ada", channel=DESK, speaker_id="ada"
            )
            await directory.prefer_channel(session, agent=agent, who="ada", channel=DESK)
        assert await sent_to(harness, agent) == "terminal:desk"

        async with harness.db.session() as session:
            await directory.prefer_channel(session, agent=agent, who="ada", channel=None)
        assert await sent_to(harness, agent) == "terminal:tty"
