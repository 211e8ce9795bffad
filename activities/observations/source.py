"""The context source for observations: what the agent believes about the people present.

Each fact is shown with its trust label (who it came from), so the model can weigh an
operator's word above its own inference. Facts are ranked operator, then self, told and
inferred, newest first within each, and the block trims from the end: when the budget is
tight, inferences go first and operator-set facts last.
"""

from __future__ import annotations

from activities.context.fencing import Provenance
from activities.context.model import ContextBlock, ContextRequest, Trim
from schemas.observations import Observation
from store.db import Database
from store.queries.observations import active_observations_on

OBSERVATIONS = Provenance(
    source="observations",
    origin="facts you gathered about people and yourself, each labelled with who it came from",
    trust="operator facts are checked; the rest are claims and guesses that may be wrong",
)

RANK = {"operator": 0, "self": 1, "told": 2, "inferred": 3}
"""Trust labels best first: the order the block keeps them in when it must trim."""

LABELS = {
    "operator": "set by your operator",
    "self": "said by them",
    "told": "told by someone else",
    "inferred": "your inference",
}
"""How each trust label reads in the block."""


def ranked(observations: list[Observation]) -> list[Observation]:
    """Best-trusted first; within a trust label, the most recently observed first."""
    newest = sorted(observations, key=lambda o: o.observed_at, reverse=True)
    return sorted(newest, key=lambda o: RANK[o.trust])


def line(observation: Observation, name: str) -> str:
    """One fact as the model reads it: subject, type, value and trust label."""
    return f"- {name}: {observation.type} = {observation.value} [{LABELS[observation.trust]}]"


class ObservationsSource:
    """Active observations about the people present and about the agent itself."""

    name = "observations"
    required = False

    def __init__(self, db: Database) -> None:
        self._db = db

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The facts about the speaker, the other participants and the agent, ranked."""
        people = list(dict.fromkeys([request.input.person_id, *request.input.participants]))
        facts, people_named = await active_observations_on(
            self._db.lane, agent=request.agent.handle, person_ids=[None, *people]
        )
        names: dict[str | None, str] = {None: "you"} | people_named
        if not facts:
            return None
        return ContextBlock(
            source=self.name,
            title="What you know about the people here and yourself (subject: type = value "
            "[where it came from]):",
            items=[line(f, names.get(f.person_id, "someone")) for f in ranked(facts)],
            order=46,
            trim=Trim.LAST_FIRST,
            provenance=OBSERVATIONS,
        )
