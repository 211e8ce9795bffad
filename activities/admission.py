"""The admission activity: an event made ready for its model call in one local activity.

It does in one step, in the agent's critical section, what three workflows did in turn: the
speaker resolved to a person, the person's turn written into the conversation (recorded first
when new) under the conversation row's lock, the window read, the channel's token budget asked
and the prompt assembled (``schemas.admission``). Every part is idempotent, so an attempt run
again after a crash changes nothing twice: the turn's ID is the event's, the prompt's the
activation's.
"""

from __future__ import annotations

import asyncio

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.asked_for import AskedFor
from activities.channels.pacing import PacingActivities
from activities.context.assembler import ContextAssembler, UnknownAgentError
from activities.senses.perception import Perceived, Senses
from activities.store import StoreActivities
from schemas.activation import AssembleContextInput, DoneForThem
from schemas.admission import Admission, AdmitInput, Admitted
from schemas.agents import AgentPublic
from schemas.autonomy import SELF_SERVICE
from schemas.delivery import Affordance, AffordReplyInput
from schemas.dialog import DialogTurn, Role
from schemas.events import person_text
from schemas.records import CloseConversationInput, ResolveSpeakerInput
from store.db import Database
from store.queries.admission import admit_turn, close_if_settled


class AdmissionActivities:
    """Admits events to conversations and closes conversations only once settled."""

    def __init__(
        self,
        db: Database,
        store: StoreActivities,
        assembler: ContextAssembler,
        pacing: PacingActivities,
        *,
        asked_for: AskedFor | None = None,
        opening_turns: int = 0,
        senses: Senses | None = None,
    ) -> None:
        self._db = db
        self._store = store
        self._assembler = assembler
        self._pacing = pacing
        # None: "please remember ..." and "remind me ..." are left to the model.
        self._asked_for = asked_for
        self._opening_turns = opening_turns  # pinned in context beside the latest turns
        # None: pictures and recordings are noted by ID only, as before the senses.
        self._senses = senses

    @activity.defn(name="admission.admit")
    async def admit(self, data: AdmitInput) -> Admitted:
        """Resolve, write through, read the window, ask the budget, assemble the prompt."""
        event = data.event
        # Reads that need only the agent, channel and text start now, beside everything below.
        self._assembler.prime(agent=data.agent, channel_key=event.channel.key, query=event.text)
        # First, outside any transaction: bounded, and kept once perceived, so an attempt run
        # again asks no model twice (activities.senses.perception).
        perceived = await self._senses.perceive(data.agent, event) if self._senses else None
        speaker = ResolveSpeakerInput(
            agent=data.agent, channel=event.channel, speaker=event.speaker, seen_at=data.at
        )
        # Reads that need no turn run beside the turn's write instead of after it.
        ahead = asyncio.ensure_future(self._ahead(data))
        try:
            return await self._admitted(data, perceived, speaker, ahead)
        finally:
            # Done by then unless a step before it failed: then its outcome is not wanted.
            ahead.cancel()
            if ahead.done() and not ahead.cancelled():
                ahead.exception()  # retrieved, so a failed read is not reported twice

    async def _ahead(self, data: AdmitInput) -> tuple[Affordance, AgentPublic | None]:
        """The channel's budget and the agent, read while the turn is written."""
        if data.event.channel.service == SELF_SERVICE:  # the agent's own are never paced
            return Affordance(), await self._assembler.agent(data.agent)
        budget = AffordReplyInput(
            agent=data.agent, channel=data.event.channel, activation_id=data.activation_id
        )
        return await asyncio.gather(
            self._pacing.afford_reply(budget), self._assembler.agent(data.agent)
        )

    async def _admitted(
        self,
        data: AdmitInput,
        perceived: Perceived | None,
        speaker: ResolveSpeakerInput,
        ahead: asyncio.Future[tuple[Affordance, AgentPublic | None]],
    ) -> Admitted:
        event = data.event
        person = await self._store.resolve_speaker(speaker)
        person_id, person_name = person.person_id, person.person_name
        turn = DialogTurn(
            turn_id=event.event_id,
            conversation_id=data.conversation_id,
            role=Role.PERSON,
            speaker_id=person_id,
            speaker_name=person_name,
            text=perceived.text if perceived is not None else person_text(event),
            at=data.at,
        )
        window = await admit_turn(
            self._db,
            agent=data.agent,
            channel=event.channel,
            turn=turn,
            opening=data.opening,
            window_turns=data.window_turns,
            opening_turns=self._opening_turns,
        )
        if window is None:
            return Admitted(
                admission=Admission.CLOSED, person_id=person_id, person_name=person_name
            )
        admitted = Admitted(
            admission=Admission.ADMITTED,
            conversation_id=window.conversation_id,
            person_id=person_id,
            person_name=person_name,
            turn=turn.model_copy(update={"conversation_id": window.conversation_id}),
            window_turn_ids=window.turn_ids,
            participants=window.participants,
        )
        # Before the prompt is built, so the reply that answers the request knows it is done.
        done = await self._asked_for.carry_out(data, person_id) if self._asked_for else []
        if perceived is not None and self._senses is not None:
            done += self._senses.floor(perceived)
        affordance, agent = await ahead
        if agent is not None:  # the plan after the model reads it from the input
            admitted.deliberation = agent.config.deliberation
        if affordance.withheld is not None:
            return admitted.model_copy(update={"withheld": affordance.withheld})
        return await self._assembled(data, admitted, done, window.opening_ids, agent)

    async def _assembled(
        self,
        data: AdmitInput,
        admitted: Admitted,
        done: list[DoneForThem],
        opening: list[str],
        agent: AgentPublic | None,
    ) -> Admitted:
        """The admission with its prompt; without, saying why, if assembly failed here."""
        assert admitted.person_id is not None
        request = AssembleContextInput(
            activation_id=data.activation_id,
            agent=data.agent,
            conversation_id=admitted.conversation_id,
            channel=data.event.channel,
            event=data.event,
            person_id=admitted.person_id,
            participants=admitted.participants,
            window_turn_ids=admitted.window_turn_ids,
            now=data.at,
            done=done,
            opening_turn_ids=opening,
        )
        try:
            prompt = await self._assembler.assemble(request, agent)
        except UnknownAgentError as err:
            raise ApplicationError(str(err), type="UnknownAgent", non_retryable=True) from err
        except Exception as err:
            # The turn is written: this attempt must not fail for the prompt, or the event
            # would be retried whole. The activation's own step assembles under its retries.
            activity.logger.warning("assembly at admission failed: %s", err)
            return admitted.model_copy(update={"prompt_error": str(err)[:500]})
        return admitted.model_copy(update={"prompt": prompt})

    @activity.defn(name="admission.close")
    async def close(self, data: CloseConversationInput) -> bool:
        """Close the conversation unless a turn it has not heard of was admitted to it."""
        async with self._db.session() as session:
            return await close_if_settled(
                session,
                conversation_id=data.conversation_id,
                closed_at=data.closed_at,
                reason=data.reason,
                last_input=data.last_input,
            )
