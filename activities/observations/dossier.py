"""The dossier: a briefing on one subject synthesised from all their active observations.

The brief is a model call (the observe task), kept with a fingerprint of the facts it was
written from and written again only when that subject's active observations change.
"""

from __future__ import annotations

from dataclasses import dataclass

from activities.context.fencing import fence
from activities.gateway.gateway import ModelGateway
from activities.observations.source import OBSERVATIONS, line, ranked
from activities.prompts import load
from contract.provider_errors import ProviderError
from schemas.models import ChatMessage, ModelRequest, TaskType
from store.db import Database
from store.queries.observations import (
    active_observations,
    cached_brief,
    fingerprint,
    keep_brief,
)
from store.tables import Agent, Person

MAX_BRIEF_TOKENS = 300


class DossierError(Exception):
    """The brief could not be written (the model failed); the message says why, in one line."""


@dataclass(frozen=True)
class Dossier:
    """A brief on a subject, how many facts it stands on, and whether it was kept from before."""

    subject: str
    brief: str
    facts: int
    cached: bool


async def brief_on(
    db: Database, gateway: ModelGateway, *, agent: str, person_id: str | None
) -> Dossier:
    """The brief on ``person_id`` (``None``: the agent itself), written only if facts changed.

    Raises:
        DossierError: The model call failed.
    """
    async with db.session() as session:
        facts = await active_observations(session, agent=agent, person_ids=[person_id])
        me = await session.get(Agent, agent)
        person = await session.get(Person, person_id) if person_id else None
        digest = fingerprint(facts)
        kept = await cached_brief(session, agent=agent, person_id=person_id, digest=digest)
    agent_name = me.name if me is not None else agent
    subject = person.display_name if person is not None else "yourself"
    if not facts:
        return Dossier(subject, f"Nothing is known about {subject} yet.", 0, cached=False)
    if kept is not None:
        return Dossier(subject, kept, len(facts), cached=True)
    names = {person_id: subject}
    lines = [line(f, names.get(f.person_id, subject)) for f in ranked(facts)]
    request = ModelRequest(
        task=TaskType.OBSERVE,
        system=load("observations/brief.md")
        .replace("{name}", agent_name)
        .replace("{subject}", subject),
        messages=[ChatMessage(role="user", content=fence("\n".join(lines), OBSERVATIONS))],
        max_output_tokens=MAX_BRIEF_TOKENS,
        temperature=0.0,
    )
    try:
        response = await gateway.complete(request)
    except ProviderError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DossierError(f"the brief on {subject} was not written: {first}") from err
    text = response.text.strip() or f"(the model wrote nothing about {subject})"
    async with db.session() as session:
        await keep_brief(session, agent=agent, person_id=person_id, digest=digest, brief=text)
    return Dossier(subject, text, len(facts), cached=False)
