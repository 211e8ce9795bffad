"""Observation activities: blind extraction from an exchange, then reconciliation per fact.

Both model calls go through the gateway with schema-constrained replies. A reply that does
not fit is asked for once more, then the step gives up with a log line and changes nothing:
a missed fact is cheaper than a guessed one. Provider failures are raised classified, so
Temporal retries the transient ones under the workflow's bounded policy.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TypeVar

from pydantic import ValidationError
from temporalio import activity

from activities.gateway.errors import to_application_error
from activities.gateway.gateway import ModelGateway
from activities.heartbeating import heartbeating
from activities.memory.encoder import Encoder
from activities.memory.formation.calls import read_reply
from activities.observations.prompts import (
    ExtractionReply,
    extraction_request,
    reconciliation_request,
)
from activities.observations.reconcile import apply_verdict, read_verdict
from contract.provider_errors import ProviderError
from schemas.models import ModelRequest, TaskType
from schemas.observations import (
    OFF_ON_PLAN,
    ExtractInput,
    ExtractResult,
    ObservationProposal,
    ObservationSettings,
    ObservationSource,
    ReconcileInput,
    ReconcileResult,
    Reconciliation,
)
from store.db import Database
from store.embedding import EmbeddingUnavailableError
from store.queries.memory_formation import RangeTurn, range_turns
from store.queries.observations import find_observation, similar_active
from store.tables import Agent, Person

log = logging.getLogger(__name__)

T = TypeVar("T")

ATTEMPTS = 2
"""A reply that does not fit its schema is asked for once more, then dropped."""

_NOT_LABEL = re.compile(r"[^a-z0-9]+")


def type_label(raw: str) -> str:
    """A fact type as a stable snake_case label: ``Home City`` and ``home-city`` match."""
    return _NOT_LABEL.sub("_", raw.strip().lower()).strip("_")[:64] or "fact"


def subjects(turns: list[RangeTurn], agent_name: str) -> dict[str, str | None]:
    """Names a fact's subject may take, folded to lower case: each speaker, and the agent."""
    named: dict[str, str | None] = {
        name.casefold(): None for name in ("me", "myself", agent_name, f"{agent_name} (you)")
    }
    for turn in turns:
        if turn.role != "agent" and turn.person_id is not None:
            named.setdefault(turn.speaker_name.strip().casefold(), turn.person_id)
    return named


class ObservationActivities:
    """Extraction and reconciliation; vectors from the encoder when there is one."""

    def __init__(
        self,
        db: Database,
        gateway: ModelGateway,
        encoder: Encoder | None,
        settings: ObservationSettings,
    ) -> None:
        self._db = db
        self._gateway = gateway
        self._encoder = encoder
        self._settings = settings

    async def _ask(
        self, request: ModelRequest, parse: Callable[[str], T | None], what: str
    ) -> T | None:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                response = await self._gateway.complete(request)
            except ProviderError as err:
                raise to_application_error(err) from err
            parsed = parse(response.text)
            if parsed is not None:
                return parsed
            log.warning(
                "%s reply did not fit its schema (attempt %d of %d)", what, attempt, ATTEMPTS
            )
        log.warning("%s dropped: no reply fitted its schema", what)
        return None

    async def _embed(self, text: str) -> list[float] | None:
        if self._encoder is None:
            return None
        try:
            return (await self._encoder.encode([text]))[0]
        except EmbeddingUnavailableError as err:
            # Fail soft: candidates then rank by type and recency alone.
            log.warning("observation not embedded: %s", err)
            return None

    @activity.defn(name="observations.extract")
    async def extract(self, data: ExtractInput) -> ExtractResult:
        """Propose facts from the range's turns alone (blind to what is already believed)."""
        async with heartbeating():
            return await self._extract(data)

    async def _extract(self, data: ExtractInput) -> ExtractResult:
        async with self._db.session() as session:
            turns = await range_turns(
                session,
                conversation_id=data.conversation_id,
                after_turn=data.after_turn,
                through_turn=data.through_turn,
            )
            agent = await session.get(Agent, data.agent)
        if not self._settings.enabled or agent is None:
            return ExtractResult()
        if not self._gateway.runs(TaskType.OBSERVE):
            return ExtractResult(skipped=OFF_ON_PLAN)
        return await self.propose(
            turns, agent_name=agent.name, conversation_id=data.conversation_id
        )

    async def propose(
        self, turns: list[RangeTurn], *, agent_name: str, conversation_id: str | None
    ) -> ExtractResult:
        """Ask the model for the facts in ``turns`` and file each under a subject present.

        Args:
            turns: The exchange, in order; nothing else reaches the prompt.
            agent_name: The agent's name, as the turns call it.
            conversation_id: Where the turns were said, for the facts' source.
        """
        if not any(t.role != "agent" and t.person_id for t in turns):
            return ExtractResult()  # nobody else spoke: nothing to learn about anyone
        most = self._settings.max_proposals
        request = extraction_request(turns, agent_name=agent_name, most=most)
        reply = await self._ask(request, _parse_extraction, "extraction")
        if reply is None:
            return ExtractResult()
        named = subjects(turns, agent_name)
        source = ObservationSource(
            conversation_id=conversation_id, turn_first=turns[0].id, turn_last=turns[-1].id
        )
        result = ExtractResult()
        for fact in reply.facts[:most]:
            key = fact.subject.strip().casefold()
            if key not in named:
                result.dropped += 1  # about no one in the range: there is nobody to file it under
                continue
            result.proposals.append(
                ObservationProposal(
                    person_id=named[key],
                    type=type_label(fact.type),
                    value=fact.value.strip(),
                    trust=fact.trust,
                    observed_at=turns[-1].at,
                    source=source,
                )
            )
        return result

    @activity.defn(name="observations.reconcile")
    async def reconcile(self, data: ReconcileInput) -> ReconcileResult:
        """Compare one proposal with its subject's similar active facts and apply the verdict.

        With no similar fact held, the proposal is added without a call: there is nothing it
        could update, delete or repeat. A retried step that finds its own earlier write
        returns it instead of writing again.
        """
        async with heartbeating():
            return await self._reconcile(data)

    async def _reconcile(self, data: ReconcileInput) -> ReconcileResult:
        proposal = data.proposal
        async with self._db.session() as session:
            done = await find_observation(
                session, agent=data.agent, observation_id=data.observation_id
            )
        if done is not None:
            return ReconcileResult(
                action="UPDATE" if done.supersedes else "ADD",
                observation_id=done.id,
                target=done.supersedes,
                reason="already applied",
            )
        embedding = await self._embed(f"{proposal.type}: {proposal.value}")
        async with self._db.session() as session:
            candidates = await similar_active(
                session,
                agent=data.agent,
                person_id=proposal.person_id,
                type_label=proposal.type,
                embedding=embedding,
                limit=self._settings.candidates,
            )
            agent = await session.get(Agent, data.agent)
            person = await session.get(Person, proposal.person_id) if proposal.person_id else None
        if not candidates:
            verdict: Reconciliation | None = Reconciliation(action="ADD", reason="nothing held")
        else:
            agent_name = agent.name if agent is not None else data.agent
            request = reconciliation_request(
                proposal,
                candidates,
                agent_name=agent_name,
                subject_name=person.display_name if person is not None else agent_name,
            )
            verdict = await self._ask(
                request, lambda text: read_verdict(text, candidates), "reconciliation"
            )
        if verdict is None:
            return ReconcileResult(reason="dropped: the reply did not fit its schema")
        async with self._db.session() as session:
            written = await apply_verdict(
                session,
                agent=data.agent,
                proposal=proposal,
                verdict=verdict,
                candidates=candidates,
                embedding=embedding,
                observation_id=data.observation_id,
            )
        applied = written is not None or verdict.action in ("NOOP", "DELETE")
        return ReconcileResult(
            action=verdict.action if applied else None,
            observation_id=written,
            target=verdict.target,
            reason=verdict.reason,
        )


def _parse_extraction(text: str) -> ExtractionReply | None:
    try:
        return read_reply(text, ExtractionReply)
    except ValidationError as error:
        log.warning("extraction reply did not parse: %s", str(error).splitlines()[0])
        return None
