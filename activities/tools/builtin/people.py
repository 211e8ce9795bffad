"""``brief_on``: the agent reads its dossier on someone before or while talking with them.

The brief is synthesised by a model from every active observation about the person and kept
until those observations change (:mod:`activities.observations.dossier`), so asking twice
costs one call.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from activities.observations.dossier import DossierError, brief_on
from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.contacts import ContactError
from store.queries.directory import find_person

SELF = ("self", "me", "myself", "yourself")


class BriefOnInput(ToolInput):
    """Input of ``brief_on``."""

    person: str = Field(
        min_length=1, max_length=200, description="Their name or ID; 'self' for yourself."
    )


class Briefing(BaseModel):
    """The dossier on one person."""

    person: str
    facts: int = Field(description="How many active facts the brief stands on.")
    brief: str


class BriefOn(Tool):
    """A briefing on someone from everything the agent currently believes about them."""

    name = "brief_on"
    description = (
        "Read your briefing on someone you know: a short summary of every fact you hold about "
        "them, noting which are claims or your own guesses. 'self' briefs you on yourself."
    )
    input_model = BriefOnInput
    output_model = Briefing

    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps

    async def run(self, call: ToolRun, args: BriefOnInput) -> Briefing:
        """Find the person, then read (or write) their brief."""
        agent = call.context.agent
        gateway = self._deps.gateway
        if gateway is None:
            raise ToolError("briefings need a model, and none is configured for tools")
        person_id: str | None = None
        if args.person.strip().lower() not in SELF:
            async with self._deps.db.session() as session:
                try:
                    person_id = (await find_person(session, agent=agent, who=args.person)).id
                except ContactError as err:
                    raise ToolError(str(err)) from None
        try:
            found = await brief_on(self._deps.db, gateway, agent=agent, person_id=person_id)
        except DossierError as err:
            raise ToolError(str(err)) from None
        return Briefing(person=found.subject, facts=found.facts, brief=found.brief)
