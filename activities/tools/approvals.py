"""Tool approvals on the worker's side: which stored calls must wait, and their records.

:class:`ApprovalPolicy` finds out what :func:`schemas.approvals.needs_approval` needs to know
about each call of a generation round (whether ``message_contact`` writes to someone who never
talked with the agent, whether the sandbox has a network, whether a tool is a tool server's) and is
asked inside ``generation.generate``, as the round is stored: a call that needs no approval
costs no extra step. :class:`ApprovalActivities` records a pending approval (and tells the
person on their channel that the agent waits, as an unprompted message) and, later, what was
decided; a refusal becomes the call's result, which the model reads on its next round.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from temporalio import activity
from temporalio.client import Client

from activities.channels.starting import start_delivery
from activities.tools.builtin.code import TOOL_NAME as RUN_CODE
from activities.tools.builtin.contact import MessageContact
from activities.tools.mcp.tools import PREFIX as MCP_PREFIX
from schemas.approvals import (
    NOTICE_SERVICES_SKIPPED,
    ApprovalAsk,
    ApprovalDecision,
    ApprovalSettings,
    ApprovalWhen,
    AskApprovalInput,
    CallFacts,
    PendingApproval,
    SettleApprovalInput,
    approval_when,
    needs_approval,
    notice_text,
    refusal_text,
    summarize_arguments,
)
from schemas.delivery import DeliverySettings
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.models import ToolCall
from store.db import Database
from store.queries import approvals as records
from store.queries.contacts import find_contacts
from store.queries.runtime import add_outbox
from store.queries.tool_calls import finish_call, get_call
from store.tables.columns import utcnow

log = logging.getLogger(__name__)


PLACE_CALL = "place_call"
"""``activities.voice.tools.PlaceCall``'s name, by value: voice's tools import this package."""


def tool_facts(tool: str, *, sandbox_network: bool) -> CallFacts:
    """What is known of a call of ``tool`` before its arguments are read.

    Args:
        tool: The tool's registry name.
        sandbox_network: Whether the sandbox has a network (``sandbox.network`` is not 'none').
    """
    return CallFacts(
        tool=tool,
        mcp=tool.startswith(MCP_PREFIX),
        sandbox_network=tool == RUN_CODE and sandbox_network,
        rings=tool == PLACE_CALL,
    )


def when_tool_waits(
    settings: ApprovalSettings, *, agent: str, tool: str, sandbox_network: str
) -> ApprovalWhen:
    """When ``agent``'s calls of ``tool`` wait for approval (``persyn tools list``).

    The same facts and the same policy as a generation round's (:class:`ApprovalPolicy`), so the
    listing and the worker never disagree.

    Args:
        settings: The approval settings.
        agent: The agent's handle (its own rules win).
        tool: The tool's registry name, or a pattern (a tool server's ``mcp__{server}__*``).
        sandbox_network: The sandbox's network setting (``'none'``: no network).
    """
    return approval_when(
        settings,
        agent=agent,
        facts=tool_facts(tool, sandbox_network=sandbox_network != "none"),
        writes_to_contacts=tool == MessageContact.name,
    )


class ApprovalPolicy:
    """Asks :func:`needs_approval` about each call, with the facts only the worker has.

    Args:
        db: Where the dialog (who the agent wrote to) lives.
        settings: The approval settings.
        sandbox_network: The sandbox's network setting (``'none'``: no network).
    """

    def __init__(self, db: Database, settings: ApprovalSettings, *, sandbox_network: str) -> None:
        self._db = db
        self._settings = settings
        self._sandbox_network = sandbox_network != "none"

    async def asks(self, agent: str, calls: Sequence[ToolCall]) -> list[ApprovalAsk | None]:
        """For each call, the approval it waits for, or ``None`` when it may run at once."""
        if not self._settings.enabled:
            return [None] * len(calls)
        asks: list[ApprovalAsk | None] = []
        for call in calls:
            reason = needs_approval(
                self._settings, agent=agent, facts=await self._facts(agent, call)
            )
            asks.append(
                None
                if reason is None
                else ApprovalAsk(
                    approval_id=new_ulid(),
                    reason=reason[:500],
                    timeout_seconds=self._settings.timeout_for(agent),
                )
            )
        return asks

    async def _facts(self, agent: str, call: ToolCall) -> CallFacts:
        facts = tool_facts(call.name, sandbox_network=self._sandbox_network)
        if call.name == MessageContact.name and call.raw_arguments is None:
            facts = facts.model_copy(update={"new_contact": await self._new_contact(agent, call)})
        return facts

    async def _new_contact(self, agent: str, call: ToolCall) -> str | None:
        """The name of the person the call writes to, if they never talked with the agent.

        A contact that matches nobody, or several people, is left to the tool, which refuses
        it without sending anything.
        """
        who = call.arguments.get("contact")
        if not isinstance(who, str) or not who.strip():
            return None
        async with self._db.autocommit() as session:
            found = await find_contacts(session, agent=agent, who=who)
            if len(found) != 1:
                return None
            [contact] = found
            if await records.has_talked_with(session, agent=agent, person_id=contact.person_id):
                return None
        return contact.name


class ApprovalActivities:
    """Records pending approvals and their decisions.

    Args:
        db: Where approvals, tool calls and the outbox live.
        client: Starts the notice's delivery (without one, the outbox sweep does).
        delivery: How long a notice's delivery keeps trying.
        tell_the_person: Send the person the notice that the agent waits for approval.
    """

    def __init__(
        self,
        db: Database,
        client: Client | None = None,
        *,
        delivery: DeliverySettings | None = None,
        tell_the_person: bool = True,
    ) -> None:
        self._db = db
        self._client = client
        self._delivery = delivery or DeliverySettings()
        self._tell = tell_the_person

    @activity.defn(name="approvals.ask")
    async def ask(self, data: AskApprovalInput) -> PendingApproval:
        """Record the approval ``data`` names as pending (once: a retry finds it)."""
        async with self._db.session() as session:
            call = await get_call(session, call_id=data.call_id)
            tool = call.name if call is not None else "?"
            shown = (
                call.raw_arguments
                if call is not None and call.raw_arguments is not None
                else json.dumps(call.arguments if call else {}, ensure_ascii=False)
            )
            await records.add_pending(
                session, ask=data, tool=tool, arguments=summarize_arguments(shown)
            )
            row = await records.get_approval(session, approval_id=data.approval_id)
        assert row is not None
        found = records.approval_public(row)
        if self._tell:
            await self._notice(found, data)
        return found

    async def _notice(self, found: PendingApproval, data: AskApprovalInput) -> None:
        """Tell the person on their channel that the agent waits, once per approval.

        An unprompted outbox message keyed by the approval's ID (a retried step finds it sent):
        the console and the web stream show it, an adapter delivers it. Not a dialog turn: the
        platform says it, not the agent. Never on the agent's own or another agent's channels.
        """
        service, _, name = data.channel.partition(":")
        if service in NOTICE_SERVICES_SKIPPED or not name:
            return
        async with self._db.session() as session:
            queued = await add_outbox(
                session,
                message_id=data.approval_id,
                activation_id=data.approval_id,
                agent=data.agent,
                channel_key=data.channel,
                conversation_id=None,
                text_=notice_text(found),
                created_at=data.created_at,
                unprompted=True,
            )
        if queued and self._client is not None:
            await start_delivery(
                self._client,
                message_id=data.approval_id,
                agent=data.agent,
                channel=ChannelRef(service=service, channel=name),
                unprompted=True,
                settings=self._delivery,
            )

    @activity.defn(name="approvals.settle")
    async def settle(self, data: SettleApprovalInput) -> ApprovalDecision:
        """Record the decision once; a refusal becomes the call's result for the model.

        Returns the decision as recorded (the first, if one was recorded before).
        """
        async with self._db.session() as session:
            row = await records.record_decision(session, decision=data.decision)
        recorded = records.decision_of(row) if row is not None else None
        decision = recorded or data.decision
        if not decision.approved:
            async with self._db.session() as session:
                call = await get_call(session, call_id=data.call_id)
                if call is not None and call.result is None:
                    await finish_call(
                        session,
                        call_id=data.call_id,
                        result=json.dumps({"error": refusal_text(decision)}, ensure_ascii=False),
                        is_error=True,
                        at=utcnow(),
                    )
        log.info(
            "approval %s: %s by %s", decision.approval_id, decision.status, decision.decided_by
        )
        return decision
