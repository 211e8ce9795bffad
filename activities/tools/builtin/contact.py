"""Messaging a contact on the agent's own initiative (spec §4.5).

The message goes to the channel most recently used with the person unless they prefer another
(or the agent names one). It is an unprompted outbox message, delivered once through the
channel's adapter (docs/channels.md); ``persyn inbox`` lists it with its delivery state.
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.channels.starting import start_delivery
from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.text import InvalidTextError, clean_text
from store.queries.contacts import (
    Contact,
    find_contacts,
    known_contacts,
    last_channel,
    send_unprompted,
)


class MessageContactInput(ToolInput):
    """Input of ``message_contact``."""

    contact: str = Field(description="The person's name or ID.")
    text: str = Field(description="The message, exactly as they should read it.")
    channel: str | None = Field(
        default=None,
        description="'service:channel' to use instead of their preferred or last used one.",
    )


class MessageSent(BaseModel):
    """Where the message went."""

    message_id: str
    contact: str
    channel: str


def _channel(key: str) -> ChannelRef:
    service, sep, name = key.partition(":")
    try:
        if not sep:
            raise ValueError(key)
        return ChannelRef(service=service, channel=name)
    except ValueError:
        raise ToolError(f"{key!r} is not a channel: write it as 'service:channel'") from None


async def one_contact(session: AsyncSession, *, agent: str, who: str) -> Contact:
    """The one person ``who`` names, for a tool that writes to or calls them.

    Raises:
        ToolError: Nobody matches (the line lists who the agent knows), or several do.
    """
    found = await find_contacts(session, agent=agent, who=who)
    if not found:
        names = ", ".join(await known_contacts(session, agent=agent)) or "nobody yet"
        raise ToolError(f"no contact matches {who!r}; people you know: {names}")
    if len(found) > 1:
        listed = ", ".join(f"{c.name} ({c.person_id})" for c in found)
        raise ToolError(f"{who!r} could be several people: {listed}; use an ID")
    return found[0]


class MessageContact(Tool):
    """Send a message to someone, unprompted."""

    name = "message_contact"
    description = (
        "Send a message to someone you know, on your own initiative. It goes to the channel "
        "they prefer, else the one you last used with them, unless you name another."
    )
    input_model = MessageContactInput
    output_model = MessageSent

    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps

    async def run(self, call: ToolRun, args: MessageContactInput) -> MessageSent:
        """Resolve the contact and the channel, then queue the message."""
        agent = call.context.agent
        try:
            text = clean_text(args.text, what="message")
        except InvalidTextError as err:
            raise ToolError(str(err)) from None
        async with self._deps.db.session() as session:
            contact = await one_contact(session, agent=agent, who=args.contact)
            if args.channel:
                channel: ChannelRef | None = _channel(args.channel)
            elif contact.preferred_channel:
                channel = _channel(contact.preferred_channel)
            else:
                channel = await last_channel(session, agent=agent, person_id=contact.person_id)
        if channel is None:
            raise ToolError(f"there is no channel on which you have reached {contact.name}")
        # The call's own ID keys the message, so a retried call never sends it twice.
        message_id = call.call_id or new_ulid()
        async with self._deps.db.session() as session:
            await send_unprompted(
                session,
                message_id=message_id,
                agent=agent,
                agent_name=await self._deps.agent_name(agent),
                channel=channel,
                text=text,
                at=call.now,
            )
        if self._deps.client is not None:
            await start_delivery(
                self._deps.client,
                message_id=message_id,
                agent=agent,
                channel=channel,
                unprompted=True,
                settings=self._deps.settings.delivery,
            )
        return MessageSent(message_id=message_id, contact=contact.name, channel=channel.key)
