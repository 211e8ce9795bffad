"""The residue pass: when a conversation ends, what it and the ones before left behind.

One model call (the ``residue`` task, schema-constrained) reads the items still live in the
channel's memory compartment and the conversation's turns, each fenced, and answers with at
most ``max_items`` items. Every item is checked before it is kept: too long, unstorable or
instruction-shaped, it is refused, counted, and never stored. A reply that does not fit its
schema is asked for once more; then the pass keeps what it had.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from temporalio import activity

from activities.context.fencing import RESIDUE, fence
from activities.gateway.errors import to_application_error
from activities.gateway.gateway import ModelGateway
from activities.heartbeating import heartbeating
from activities.memory.formation.calls import read_reply
from activities.observations.prompts import transcript
from activities.prompts import load
from contract.provider_errors import ProviderError
from schemas.models import ChatMessage, ModelRequest, TaskType
from schemas.residue import (
    ResidueInput,
    ResidueItem,
    ResidueResult,
    ResidueSettings,
    instruction_shaped,
)
from schemas.text import InvalidTextError, clean_text
from store.db import Database
from store.queries.memory_formation import compartment, range_turns
from store.queries.residue import Carry, carry, channel_id_of, live_items
from store.sql import execute
from store.tables import Agent
from store.tables.columns import utcnow

log = logging.getLogger(__name__)

TASK = TaskType.RESIDUE
"""A task of its own (a fast model by default), metered apart from memory formation."""
ATTEMPTS = 2
OFF_ON_PLAN = "residue is off on this plan: the model is too small to synthesise it"


class ResidueReply(BaseModel):
    """The pass's answer; items are checked one by one after it parses."""

    model_config = ConfigDict(extra="forbid")

    items: list[str] = Field(max_length=20)


def residue_request(
    held: list[ResidueItem], conversation: str, *, agent_name: str, settings: ResidueSettings
) -> ModelRequest:
    """Ask for what is left behind, given what was held and the conversation's fenced turns."""
    system = (
        load("residue/synthesize.md")
        .replace("{name}", agent_name)
        .replace("{max}", str(settings.max_items))
        .replace("{chars}", str(settings.item_chars))
    )
    before = "\n".join(f"- {item.text}" for item in held) or "(nothing yet)"
    body = (
        f"Left behind before:\n{fence(before, RESIDUE)}\n\n"
        f"The conversation that just ended:\n{conversation or '(no turns)'}"
    )
    return ModelRequest(
        task=TASK,
        system=system,
        messages=[ChatMessage(role="user", content=body)],
        temperature=0.0,
        response_schema=ResidueReply.model_json_schema(),
    )


def checked(items: list[str], settings: ResidueSettings) -> tuple[list[str], int]:
    """The items that may be kept, and how many were refused."""
    kept: list[str] = []
    refused = 0
    for raw in items:
        try:
            text = clean_text(raw, what="an item", max_chars=settings.item_chars)
        except InvalidTextError:
            refused += 1
            continue
        if instruction_shaped(text) or "\n" in text:
            refused += 1
            continue
        kept.append(text)
    return kept[: settings.max_items], refused + max(0, len(kept) - settings.max_items)


class ResidueActivities:
    """The residue pass."""

    def __init__(self, db: Database, gateway: ModelGateway, settings: ResidueSettings) -> None:
        self._db = db
        self._gateway = gateway
        self._settings = settings

    @activity.defn(name="residue.synthesize")
    async def synthesize(self, data: ResidueInput) -> ResidueResult:
        """Synthesise and keep what the conversation left behind."""
        if not self._settings.enabled:
            return ResidueResult(skipped="residue is turned off (PERSYN_RESIDUE__ENABLED)")
        if not self._gateway.runs(TASK):
            return ResidueResult(skipped=OFF_ON_PLAN)
        async with heartbeating():
            return await self._synthesize(data)

    async def _synthesize(self, data: ResidueInput) -> ResidueResult:
        expire = timedelta(days=self._settings.expire_days)
        now = utcnow()
        async with self._db.session() as session:
            agent = await session.get(Agent, data.agent)
            channel_id = await channel_id_of(session, agent=data.agent, key=data.channel.key)
            if agent is None or channel_id is None:
                return ResidueResult(skipped="the agent or its channel is gone")
            shared = await compartment(session, channel_id=channel_id)
            held = await live_items(
                session,
                agent=data.agent,
                channel_ids=shared,
                now=now,
                expire=expire,
                limit=self._settings.max_items,
            )
            last = await execute(
                session,
                "SELECT max(id) AS id FROM dialog_turns WHERE conversation_id = :c",
                {"c": data.conversation_id},
            )
            through = last.scalar_one_or_none()
            turns = []
            if through is not None:
                turns = await range_turns(
                    session,
                    conversation_id=data.conversation_id,
                    after_turn=None,
                    through_turn=str(through),
                )
        if not turns:
            return ResidueResult(skipped="the conversation has no turns")
        request = residue_request(
            held, transcript(turns, agent.name), agent_name=agent.name, settings=self._settings
        )
        reply = await self._ask(request)
        if reply is None:
            return ResidueResult(skipped="no reply fitted the residue schema")
        texts, refused = checked(reply.items, self._settings)
        async with self._db.session() as session:
            result = await carry(
                session,
                carry=Carry(
                    agent=data.agent,
                    channel_id=channel_id,
                    compartment=shared,
                    conversation_id=data.conversation_id,
                    run_id=data.residue_id,
                    texts=texts,
                ),
                now=utcnow(),
                expire=expire,
                max_items=self._settings.max_items,
            )
            await session.commit()
        result.refused = refused
        return result

    async def _ask(self, request: ModelRequest) -> ResidueReply | None:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                response = await self._gateway.complete(request)
            except ProviderError as err:
                raise to_application_error(err) from err
            try:
                return read_reply(response.text, ResidueReply)
            except ValidationError:
                log.warning("residue reply did not fit its schema (%d of %d)", attempt, ATTEMPTS)
        return None
