"""Curating who an agent knows: list, show, rename, attach, detach, prefer, fold.

People are created when they first speak (spec §4.5); an operator corrects the directory.
Detaching an identity makes later traffic on it a new person (history stays); folding two
records that are one human moves identities, addresses, dialog and memories to the survivor,
retroactively, and tells the conversations still open so they see the survivor at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from contract import names
from schemas.contacts import ContactRecord, PersonFolded
from schemas.events import ChannelRef
from schemas.settings import Settings
from store.queries import directory
from store.queries.fold import FoldResult
from store.tables.columns import utcnow
from temporal.client import TemporalUnavailableError, connect
from usecases.directory import in_agent


async def list_contacts(*, settings: Settings, agent: str) -> list[ContactRecord]:
    """Everyone the agent has met, most recent first.

    Raises:
        UnknownAgentError: no such agent.
    """
    return await in_agent(settings, agent, lambda s: directory.list_contacts(s, agent=agent))


async def show_contact(*, settings: Settings, agent: str, who: str) -> ContactRecord:
    """One contact (named by ID, name or speaker ID) with identities and addresses.

    Raises:
        UnknownAgentError: no such agent.
        ContactError: ``who`` names nobody, or several people.
    """
    return await in_agent(
        settings, agent, lambda s: directory.show_contact(s, agent=agent, who=who)
    )


async def rename_contact(*, settings: Settings, agent: str, who: str, name: str) -> ContactRecord:
    """Name a contact; a channel's name for them no longer replaces it."""
    return await in_agent(
        settings, agent, lambda s: directory.rename_contact(s, agent=agent, who=who, name=name)
    )


async def attach_identity(
    *, settings: Settings, agent: str, who: str, channel: ChannelRef, speaker_id: str
) -> ContactRecord:
    """Make ``speaker_id`` on ``channel`` this contact."""
    return await in_agent(
        settings,
        agent,
        lambda s: directory.attach_identity(
            s, agent=agent, who=who, channel=channel, speaker_id=speaker_id
        ),
    )


async def attach_address(
    *, settings: Settings, agent: str, who: str, kind: str, address: str
) -> ContactRecord:
    """Give a contact an address (e-mail, phone, ...)."""
    return await in_agent(
        settings,
        agent,
        lambda s: directory.attach_address(s, agent=agent, who=who, kind=kind, address=address),
    )


async def detach_identity(
    *, settings: Settings, agent: str, channel: ChannelRef, speaker_id: str
) -> str:
    """Detach an identity; returns the name of the contact it left."""
    return await in_agent(
        settings,
        agent,
        lambda s: directory.detach_identity(s, agent=agent, channel=channel, speaker_id=speaker_id),
    )


async def detach_address(
    *, settings: Settings, agent: str, who: str, kind: str, address: str
) -> ContactRecord:
    """Forget one of a contact's addresses."""
    return await in_agent(
        settings,
        agent,
        lambda s: directory.detach_address(s, agent=agent, who=who, kind=kind, address=address),
    )


async def prefer_channel(
    *, settings: Settings, agent: str, who: str, channel: ChannelRef | None
) -> ContactRecord:
    """Set the channel the agent reaches a contact on (``None``: the most recent one)."""
    return await in_agent(
        settings,
        agent,
        lambda s: directory.prefer_channel(s, agent=agent, who=who, channel=channel),
    )


@dataclass(frozen=True)
class Folded:
    """A fold's result, and why open conversations were not told, if they were not."""

    result: FoldResult
    warning: str | None = None


async def tell_open_conversations(client: Client, result: FoldResult) -> int:
    """Tell each open conversation the fold touched; returns how many were told.

    A conversation that closed meanwhile holds no participants any more and is skipped.
    """
    told = 0
    notice = PersonFolded(folded=result.folded, survivor=result.survivor)
    for conversation_id in result.open_conversations:
        handle = client.get_workflow_handle(names.conversation_workflow_id(conversation_id))
        try:
            await handle.signal(names.PERSON_FOLDED, notice)
        except RPCError as err:
            if err.status is not RPCStatusCode.NOT_FOUND:
                raise
        else:
            told += 1
    return told


async def fold_contacts(
    *, settings: Settings, agent: str, folded: str, survivor: str, name: str | None, by: str
) -> Folded:
    """Fold one contact into another, retroactively, and tell the open conversations.

    The fold is stored first; a Temporal that cannot be reached leaves a warning, not an
    error: the conversations see the survivor once they close.
    """
    result = await in_agent(
        settings,
        agent,
        lambda s: directory.fold_contacts(
            s, agent=agent, folded=folded, survivor=survivor, name=name, by=by, at=utcnow()
        ),
    )
    if not result.open_conversations:
        return Folded(result)
    try:
        await tell_open_conversations(await connect(settings), result)
    except (TemporalUnavailableError, RPCError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return Folded(
            result,
            f"the fold is stored, but {len(result.open_conversations)} open conversation(s) "
            f"were not told ({first}): they see the survivor once they close",
        )
    return Folded(result)
