"""What an agent believes about the people it knows, from the operator's side.

Facts are listed best-trusted first; an operator's fact outranks anything inferred; the
dossier on a person is written by the model from all their active facts and kept until they
change. ``who`` names a person by ID, name or speaker ID, or ``self`` for the agent itself.
"""

from __future__ import annotations

from sqlmodel.ext.asyncio.session import AsyncSession

from activities.gateway.gateway import ModelGateway
from activities.observations.dossier import Dossier, brief_on
from schemas.events import ChannelRef
from schemas.observations import Observation, ObservationProposal
from schemas.settings import Settings
from store.db import Database
from store.queries import directory
from store.queries.observations import active_observations, record_observation
from store.queries.people import known_name
from store.tables.columns import utcnow
from usecases.directory import in_agent

SELF = ("self", "me")


async def _subject(session: AsyncSession, agent: str, who: str) -> str | None:
    """The person's ID (``None``: the agent itself)."""
    if who.strip().lower() in SELF:
        return None
    return (await directory.find_person(session, agent=agent, who=who)).id


async def facts(*, settings: Settings, agent: str, who: str) -> list[Observation]:
    """The active facts about a person, unranked.

    Raises:
        UnknownAgentError: no such agent.
        ContactError: ``who`` names nobody, or several people.
    """

    async def act(session: AsyncSession) -> list[Observation]:
        subject = await _subject(session, agent, who)
        return await active_observations(session, agent=agent, person_ids=[subject])

    return await in_agent(settings, agent, act)


async def observe(
    *,
    settings: Settings,
    agent: str,
    who: str,
    type_label: str,
    value: str,
    replaces: str | None,
) -> str:
    """Record a fact the operator sets (trust ``operator``); returns its ID.

    Raises:
        UnknownAgentError: no such agent.
        ContactError: ``who`` names nobody, or several people.
        ObservationConflictError: ``replaces`` is not an active fact of theirs.
    """

    async def act(session: AsyncSession) -> str:
        proposal = ObservationProposal(
            person_id=await _subject(session, agent, who),
            type=type_label,
            value=value,
            trust="operator",
            observed_at=utcnow(),
        )
        return await record_observation(
            session,
            agent=agent,
            proposal=proposal,
            embedding=None,
            supersedes=replaces,
            reason="set by the operator",
        )

    return await in_agent(settings, agent, act)


async def brief(
    *, settings: Settings, db: Database, gateway: ModelGateway, agent: str, who: str
) -> Dossier:
    """The dossier on a person, written by the model only when their facts changed.

    ``db`` and ``gateway`` come from the caller, which builds (and closes) them.

    Raises:
        UnknownAgentError: no such agent.
        ContactError: ``who`` names nobody, or several people.
        DossierError: the model call failed.
    """
    person = await in_agent(settings, agent, lambda s: _subject(s, agent, who))
    return await brief_on(db, gateway, agent=agent, person_id=person)


async def remembered_name(
    *, settings: Settings, agent: str, channel: ChannelRef, speaker_id: str
) -> str | None:
    """The name ``agent`` knows this speaker by on ``channel`` (a rename kept), or ``None``.

    A client that lets its person rename themselves restores the chosen name with this in
    their next session, so they need not set it again.
    """

    async def act(session: AsyncSession) -> str | None:
        return await known_name(session, agent=agent, channel=channel, speaker_id=speaker_id)

    return await in_agent(settings, agent, act)
