"""Loading a :class:`History` for one exchange from PostgreSQL, sized by the rules' needs."""

from __future__ import annotations

from datetime import datetime

from activities.guardrails.history import History, Needs, ToolResult, Turn
from store.lane import Lane
from store.queries import guardrails as queries
from store.queries.guardrails import TurnFacts


def _turn(row: TurnFacts) -> Turn:
    return Turn(
        id=row.id,
        role=row.role,
        text=row.text,
        at=row.at,
        person_id=row.person_id,
        conversation_id=row.conversation_id,
    )


async def load_history(
    lane: Lane,
    *,
    needs: Needs,
    agent: str,
    now: datetime,
    conversation_id: str | None,
    channel_key: str,
    person_id: str | None,
    activation_id: str | None,
    inbound: Turn | None,
    reply: Turn | None,
) -> History:
    """What the rules with ``needs`` read about one exchange, as of ``now``.

    ``inbound`` and ``reply`` are given, not read: before the reply is sent (the screen) the
    candidate is not stored yet. Every read is one statement on the driver lane.
    """
    conversation: list[Turn] = []
    if needs.conversation_turns and conversation_id is not None:
        rows = await queries.person_turns_in_conversation(
            lane,
            conversation_id=conversation_id,
            limit=needs.conversation_turns,
            through=inbound.id if inbound is not None else None,
        )
        conversation = [_turn(r) for r in rows]
        if inbound is not None and all(t.id != inbound.id for t in conversation):
            conversation = [*conversation, inbound][-needs.conversation_turns :]
    replies: list[Turn] = []
    if needs.earlier_replies and conversation_id is not None:
        rows = await queries.agent_replies_before(
            lane,
            conversation_id=conversation_id,
            limit=needs.earlier_replies,
            before=reply.id if reply is not None else None,
        )
        replies = [_turn(r) for r in rows]
    person: list[Turn] = []
    if needs.person_window is not None and person_id is not None:
        rows = await queries.person_turns_since(
            lane, agent=agent, person_id=person_id, since=now - needs.person_window, until=now
        )
        person = [_turn(r) for r in rows]
    channel: list[Turn] = []
    if needs.channel_window is not None:
        rows = await queries.channel_turns_since(
            lane,
            agent=agent,
            channel_key=channel_key,
            since=now - needs.channel_window,
            until=now,
        )
        channel = [_turn(r) for r in rows]
    tools: list[ToolResult] = []
    if needs.tool_results and activation_id is not None:
        calls = await queries.tool_results(lane, activation_id=activation_id)
        tools = [ToolResult(id=c.id, name=c.name, text=c.result) for c in calls]
    return History(
        now=now,
        inbound=inbound,
        reply=reply,
        replies=replies,
        conversation=conversation,
        person=person,
        channel=channel,
        tool_results=tools,
    )


async def stored_turns(lane: Lane, *turn_ids: str | None) -> list[Turn | None]:
    """The stored dialog turns with these IDs, in order (``None`` for an ID unknown or unset)."""
    wanted = [t for t in turn_ids if t is not None]
    rows = await queries.turns_by_id(lane, turn_ids=wanted) if wanted else []
    found = {row.id: _turn(row) for row in rows}
    return [found.get(t) if t is not None else None for t in turn_ids]
