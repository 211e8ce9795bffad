"""The context sources' reads on the driver lane return what the session's queries return."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from schemas.agents import AgentCreate
from schemas.autonomy import FiringKind, GoalStatus
from schemas.ids import new_ulid
from schemas.notes import NoteScope, NoteSource
from schemas.workspaces import ChangeKind, Member, Mode, WorkspaceChange
from store.db import Database
from store.queries.agents import create_agent
from store.queries.autonomy import recent_autonomy, recent_autonomy_on
from store.queries.goals import (
    Progress,
    add_goal,
    get_facts,
    get_facts_on,
    list_goals,
    list_goals_on,
    put_fact,
    update_goal,
)
from store.queries.notes import NoteDraft, NoteLimits, add_note, list_notes, pinned_for
from store.queries.workspaces import (
    add_changes,
    agent_workspaces_on,
    create_workspace,
    get_workspace,
    list_changes,
    memberships,
)
from store.tables.autonomy import AutonomyLogRow, ToolCallRow
from store.tables.runtime import ActivationRow
from tests.harness import Stack, unique
from tests.workspaces.helpers import workspace_name

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
LIMITS = NoteLimits(max_per_scope=50, max_pinned_per_scope=50, similar_threshold=1.1)


@pytest.fixture
async def db(stack: Stack) -> AsyncIterator[Database]:
    database = Database(stack.dsn, pool_size=2)
    try:
        yield database
    finally:
        await database.aclose()


async def _agent(db: Database) -> str:
    spec = AgentCreate(handle=unique("agent"), name="Ada", persona="A test agent.")
    async with db.session() as session:
        return (await create_agent(session, spec=spec)).handle


async def test_goals_and_facts_on_the_lane_match_the_session(db: Database) -> None:
    agent = await _agent(db)
    async with db.session() as session:
        first = await add_goal(session, agent=agent, description="One.", created_in=None, at=NOW)
        second = await add_goal(
            session, agent=agent, description="Two.", created_in=None, at=NOW + timedelta(1)
        )
        third = await add_goal(session, agent=agent, description="Three.", created_in=None, at=NOW)
        await update_goal(
            session,
            agent=agent,
            goal_id=second.goal_id,
            status=GoalStatus.IN_PROGRESS,
            note="Going.",
            at=NOW + timedelta(2),
            progress=Progress(state="half", next_step="more", last_step="some"),
        )
        await update_goal(
            session,
            agent=agent,
            goal_id=third.goal_id,
            status=GoalStatus.ACHIEVED,
            note=None,
            at=NOW,
        )
        for subject, key in [("self", "b"), ("self", "a"), ("p1", "k"), ("p2", "k")]:
            await put_fact(session, agent=agent, subject=subject, key=key, value="v", at=NOW)
    async with db.autocommit() as session:
        open_goals = await list_goals(session, agent=agent)
        every = await list_goals(session, agent=agent, statuses=list(GoalStatus), limit=2)
        facts = await get_facts(session, agent=agent, subjects=["self", "p1", "nobody"])
    assert [g.goal_id for g in open_goals] == [first.goal_id, second.goal_id]
    assert await list_goals_on(db.lane, agent=agent) == open_goals
    assert await list_goals_on(db.lane, agent=agent, statuses=list(GoalStatus), limit=2) == every
    assert await list_goals_on(db.lane, agent=agent, statuses=[]) == []
    assert [(f.subject, f.key) for f in facts] == [("p1", "k"), ("self", "a"), ("self", "b")]
    assert await get_facts_on(db.lane, agent=agent, subjects=["self", "p1", "nobody"]) == facts
    assert await get_facts_on(db.lane, agent=agent, subjects=[]) == []


async def test_recent_autonomy_on_the_lane_matches_the_session(db: Database) -> None:
    agent = await _agent(db)
    fired = [new_ulid() for _ in range(4)]
    async with db.session() as session:
        for n, event_id in enumerate(fired):
            session.add(
                AutonomyLogRow(
                    event_id=event_id,
                    agent=agent,
                    kind="reminder" if n != 2 else "heartbeat",
                    objective=f"objective {n}",
                    delivered=n != 1,
                    assessment="fine" if n == 0 else None,
                    fired_at=NOW + timedelta(minutes=n),
                )
            )
        activation = new_ulid()
        session.add(
            ActivationRow(
                id=activation,
                agent=agent,
                event_id=fired[0],
                trigger="reminder",
                outcome="replied",
                text="Done.",
                completed_at=NOW,
            )
        )
        for seq, (name, failed) in enumerate([("b_tool", False), ("a_tool", True)]):
            session.add(
                ToolCallRow(
                    id=new_ulid(),
                    agent=agent,
                    prompt_id=new_ulid(),
                    activation_id=activation,
                    round=0,
                    seq=seq,
                    provider_call_id=f"call-{seq}",
                    name=name,
                    is_error=failed,
                    created_at=NOW,
                )
            )
        await session.commit()
    for kind in FiringKind:
        async with db.autocommit() as session:
            expected = await recent_autonomy(session, agent=agent, kind=kind, limit=5)
        assert await recent_autonomy_on(db.lane, agent=agent, kind=kind, limit=5) == expected
    async with db.autocommit() as session:
        reminders = await recent_autonomy(session, agent=agent, kind=FiringKind.REMINDER)
    # Newest first, undelivered left out; a firing without an activation is still pending.
    assert [e.event_id for e in reminders] == [fired[3], fired[0]]
    assert (reminders[0].outcome, reminders[0].tools) == ("pending", [])
    assert reminders[1].tools == ["b_tool", "a_tool (failed)"]
    assert await recent_autonomy_on(db.lane, agent=new_ulid(), kind=FiringKind.REMINDER) == []


async def test_pinned_notes_on_the_lane_are_the_live_pinned_ones_in_reach(db: Database) -> None:
    agent = await _agent(db)
    present, absent, channel = new_ulid(), new_ulid(), "terminal:lane"

    def draft(scope: NoteScope, scope_id: str, *, pinned: bool = True) -> NoteDraft:
        return NoteDraft(
            scope=scope,
            scope_id=scope_id,
            text=f"About {scope.value} {scope_id} {new_ulid()}.",
            pinned=pinned,
            source=NoteSource.OPERATOR,
            written_by="the operator",
        )

    async with db.session() as session:
        for scope, scope_id, pinned in [
            (NoteScope.AGENT, "", True),
            (NoteScope.AGENT, "", False),
            (NoteScope.PERSON, present, True),
            (NoteScope.PERSON, absent, True),
            (NoteScope.CHANNEL, channel, True),
            (NoteScope.CHANNEL, "terminal:other", True),
        ]:
            await add_note(
                session,
                agent=agent,
                draft=draft(scope, scope_id, pinned=pinned),
                limits=LIMITS,
                at=NOW,
            )
        old = (
            await add_note(
                session, agent=agent, draft=draft(NoteScope.PERSON, present), limits=LIMITS, at=NOW
            )
        ).note
        newer = replace(draft(NoteScope.PERSON, present), supersedes=old.id)
        await add_note(session, agent=agent, draft=newer, limits=LIMITS, at=NOW)
        await session.commit()
        live = await list_notes(session, agent=agent)
    reach = {(NoteScope.AGENT, ""), (NoteScope.PERSON, present), (NoteScope.CHANNEL, channel)}
    expected = sorted(
        (n for n in live if n.pinned and (n.scope, n.scope_id) in reach), key=lambda n: n.id
    )
    found = await pinned_for(db.lane, agent=agent, person_ids=[present], channel_key=channel)
    assert found == expected
    assert len(found) == 4 and old.id not in {n.id for n in found}
    assert all(n.created_at.tzinfo is not None for n in found)


async def test_an_agents_workspaces_in_one_statement_match_the_session_reads(
    db: Database,
) -> None:
    me, other, third = await _agent(db), await _agent(db), await _agent(db)
    # One prefix and a last letter: the same order in Python as in any collation.
    base = workspace_name()[:28].rstrip("-")
    names = [f"{base}-{letter}" for letter in "abc"]
    async with db.session() as session:
        for n, name in enumerate(names):
            members = [Member(agent=me, mode=Mode.READ_WRITE if n else Mode.READ_ONLY)]
            if n != 1:
                members += [
                    Member(agent=third, mode=Mode.READ_ONLY),
                    Member(agent=other, mode=Mode.READ_WRITE),
                ]
            await create_workspace(
                session,
                name=name,
                volume=f"persyn-workspace-{name}",
                created_by="operator",
                at=NOW,
                members=members,
            )
        changes = [
            WorkspaceChange(
                id=new_ulid(),
                workspace=names[0],
                agent=agent,
                path=f"{agent}.md",
                kind=ChangeKind.MODIFIED,
                bytes_before=1,
                bytes_after=2,
                lines_added=1,
                lines_removed=0,
                at=at,
            )
            for agent, at in [(me, NOW), (other, NOW + timedelta(1)), (third, NOW)]
        ]
        await add_changes(session, changes=changes)
        await session.commit()
    async with db.autocommit() as session:
        mine = await memberships(session, agent=me)
        expected = [
            (
                mode,
                await get_workspace(session, name=name),
                next(iter(await list_changes(session, workspace=name, limit=1)), None),
            )
            for name, (_, mode) in list(mine.items())[:2]
        ]
    found, total = await agent_workspaces_on(db.lane, agent=me, limit=2)
    assert total == len(mine) == 3
    assert [(w.mode, w.workspace, w.latest) for w in found] == expected
    assert [w.workspace.name for w in found] == names[:2]
    assert found[0].latest == changes[1] and found[1].latest is None
    assert [m.agent for m in found[0].workspace.members] == sorted([me, other, third])
    assert await agent_workspaces_on(db.lane, agent=new_ulid(), limit=2) == ([], 0)
