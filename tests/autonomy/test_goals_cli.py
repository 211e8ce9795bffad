"""``persyn goals``: the operator's goals, owner requests, stalled goals and one-line errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.agents import AgentCreate
from schemas.autonomy import GoalRequest, GoalStatus
from schemas.settings import get_settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries.agents import create_agent
from store.queries.goal_requests import file_request
from store.queries.goals import Progress, update_goal
from store.tables.autonomy import GoalRow
from tests import cli_calls as calls
from tests.harness import unique

T = TypeVar("T")


@pytest.fixture(autouse=True)
def deployment(
    postgres: EmbeddedPostgres, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PERSYN_DATABASE_URL", postgres.dsn)
    monkeypatch.setenv("PERSYN_ENCODER", "none")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def in_db(postgres: EmbeddedPostgres, act: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Run ``act`` in a session of its own (the CLI runs its own event loop, so must this)."""

    async def go() -> T:
        db = Database(postgres.dsn, pool_size=1)
        try:
            async with db.session() as session:
                return await act(session)
        finally:
            await db.aclose()

    return asyncio.run(go())


@pytest.fixture
def agent(postgres: EmbeddedPostgres) -> str:
    handle = unique("goals")
    in_db(
        postgres,
        lambda s: create_agent(
            s, spec=AgentCreate(handle=handle, name="Goals Test", persona="A tester.")
        ),
    )
    return handle


def ok(*args: str) -> str:
    return calls.ok("goals", *args)


def refused(*args: str) -> str:
    return calls.refused("goals", *args)


def added(agent: str, *args: str) -> str:
    """Add a goal; its ID."""
    out = ok("add", "-a", agent, *args)
    assert out.startswith("added ")
    return out.split()[1]


def listed(agent: str) -> dict[str, dict[str, object]]:
    """Every goal of the agent's, by ID."""
    found = json.loads(ok("list", "-a", agent, "--all", "--json"))
    return {goal["goal_id"]: goal for goal in found}


def ask(postgres: EmbeddedPostgres, agent: str, goal_id: str, field: str, value: str) -> str:
    """File a request as the agent's tool would; its ID."""

    async def act(session: AsyncSession) -> GoalRequest:
        found = await file_request(
            session,
            agent=agent,
            goal_id=goal_id,
            field=field,
            value=value,
            reason="it reads better",
            asked_in=None,
            at=datetime.now(UTC),
        )
        await session.commit()
        return found

    return in_db(postgres, act).request_id


def move(postgres: EmbeddedPostgres, goal_id: str, at: datetime) -> None:
    """Set when a goal last moved, as if the agent had last moved it then."""

    async def act(session: AsyncSession) -> None:
        row = await session.get(GoalRow, goal_id)
        assert row is not None
        row.moved_at = at
        session.add(row)
        await session.commit()

    in_db(postgres, act)


def test_added_goals_are_listed_with_what_the_operator_set(agent: str) -> None:
    assert ok("list", "-a", agent) == "no goals\n"
    plain = added(agent, "Learn to bake bread.")
    full = added(
        agent,
        "Read widely about the history of astronomy, from Babylon on.",
        "--title",
        "Astronomy's history",
        "--kind",
        "interest",
        "--signal",
        "A new era each month.",
    )

    lines = ok("list", "-a", agent).splitlines()
    assert lines == [
        f"{plain}  goal      open         Learn to bake bread.  [set by operator]",
        f"{full}  interest  open         Astronomy's history  [set by operator]",
    ]
    goals = listed(agent)
    assert goals[plain]["kind"] == "goal" and goals[plain]["title"] is None
    assert goals[full]["title"] == "Astronomy's history" and goals[full]["kind"] == "interest"
    assert goals[full]["progress_signal"] == "A new era each month."
    assert goals[full]["description"].startswith("Read widely")  # type: ignore[attr-defined]
    assert {g["set_by"] for g in goals.values()} == {"operator"}
    assert {g["status"] for g in goals.values()} == {"open"}

    as_json = json.loads(ok("add", "-a", agent, "Walk daily.", "--json"))
    assert as_json["set_by"] == "operator" and as_json["description"] == "Walk daily."


def test_set_changes_what_a_goal_is_and_refuses_what_it_cannot(agent: str) -> None:
    goal = added(agent, "Learn to bake bread.")
    out = ok("set", "-a", agent, goal.lower(), "--title", "Bread", "--kind", "interest")
    assert out == f"{goal}  interest  open         Bread  [set by operator]\n"
    changed = listed(agent)[goal]
    assert changed["title"] == "Bread" and changed["kind"] == "interest"
    assert changed["description"] == "Learn to bake bread."
    assert changed["updated_at"] > changed["created_at"]  # type: ignore[operator]

    assert "kind is goal or interest, not 'quest'" in refused(
        "set", "-a", agent, goal, "--kind", "quest"
    )
    assert "nothing to change" in refused("set", "-a", agent, goal)
    assert "is not a ULID" in refused("set", "-a", agent, "nope", "--title", "X")
    missing = "01JD3M6Z8Q4N1V5X7B2C9E0F1G"
    assert f"there is no goal {missing}" in refused("set", "-a", agent, missing, "--title", "X")
    assert "control character U+0007" in refused(
        "set", "-a", agent, goal, "--description", "ring\x07"
    )
    assert listed(agent)[goal]["title"] == "Bread"
    assert listed(agent)[goal]["kind"] == "interest"


def test_an_approved_request_applies_once(postgres: EmbeddedPostgres, agent: str) -> None:
    goal = added(agent, "Learn to bake bread.", "--title", "Bread")
    assert ok("requests", "-a", agent) == "no requests\n"
    request = ask(postgres, agent, goal, "title", "Sourdough")
    today = f"{datetime.now(UTC):%Y-%m-%d}"

    assert ok("requests", "-a", agent) == (
        f'{request}  {goal}  title: "Sourdough"  (it reads better)  [pending, {today}]\n'
    )
    assert listed(agent)[goal]["title"] == "Bread"  # unchanged until approved

    assert ok("approve", "-a", agent, request) == (
        f'approved {request}: title is now "Sourdough"\n'
    )
    assert listed(agent)[goal]["title"] == "Sourdough"
    assert ok("requests", "-a", agent) == "no requests\n"
    [decided] = json.loads(ok("requests", "-a", agent, "--all", "--json"))
    assert decided["status"] == "approved" and decided["decided_by"] == "operator"
    assert f"[approved, {today}]" in ok("requests", "-a", agent, "--all")

    assert f"request {request} was already approved" in refused("approve", "-a", agent, request)
    assert "already approved" in refused("refuse", "-a", agent, request)
    missing = "01JD3M6Z8Q4N1V5X7B2C9E0F1G"
    assert f"there is no request {missing}" in refused("approve", "-a", agent, missing)


def test_a_refused_request_leaves_the_goal_as_it_was(
    postgres: EmbeddedPostgres, agent: str
) -> None:
    goal = added(agent, "Learn to bake bread.")
    request = ask(postgres, agent, goal, "kind", "interest")
    assert ok("refuse", "-a", agent, request) == f"refused {request}: the goal stays as it was\n"
    assert listed(agent)[goal]["kind"] == "goal"
    [decided] = json.loads(ok("requests", "-a", agent, "--all", "--json"))
    assert decided["status"] == "refused"
    assert "already refused" in refused("approve", "-a", agent, request)
    assert listed(agent)[goal]["kind"] == "goal"


def test_a_goal_unmoved_too_long_shows_as_stalled(postgres: EmbeddedPostgres, agent: str) -> None:
    still = added(agent, "Learn to bake bread.")
    moving = added(agent, "Walk daily.")
    long_ago = datetime.now(UTC) - timedelta(days=10)
    move(postgres, still, long_ago)
    move(postgres, moving, long_ago)
    step = Progress(state="two walks so far", next_step="walk to the river")
    in_db(
        postgres,
        lambda s: update_goal(
            s,
            agent=agent,
            goal_id=moving,
            status=None,
            note=None,
            at=datetime.now(UTC),
            progress=step,
        ),
    )

    lines = ok("list", "-a", agent).splitlines()
    assert lines == [
        f"{still}  goal      open         Learn to bake bread.  [set by operator]",
        f"  stalled: no move since {long_ago:%Y-%m-%d}",
        f"{moving}  goal      open         Walk daily.  next: walk to the river  [set by operator]",
    ]
    assert listed(agent)[moving]["state"] == "two walks so far"

    move(postgres, moving, long_ago)
    in_db(
        postgres,
        lambda s: update_goal(
            s, agent=agent, goal_id=still, status=GoalStatus.ACHIEVED, note=None, at=long_ago
        ),
    )
    lines = ok("list", "-a", agent, "--all").splitlines()
    assert lines[0].startswith(f"{still}  goal      achieved  ")  # closed: never stalled
    assert lines[1].startswith(f"{moving}  ")
    assert lines[2] == f"  stalled: no move since {long_ago:%Y-%m-%d}"


def test_text_with_nul_is_one_line_and_stores_nothing(agent: str) -> None:
    line = refused("add", "-a", agent, "Bake.", "--title", "Br\x00ead")
    assert "title contains a NUL character" in line
    assert "control character" in refused("add", "-a", agent, "Ba\x1bke.")
    assert "kind is goal or interest" in refused("add", "-a", agent, "Bake.", "--kind", "quest")
    assert "title is 121 characters" in refused("add", "-a", agent, "Bake.", "--title", "t" * 121)
    assert listed(agent) == {}


def test_an_unknown_agent_is_one_line() -> None:
    missing = unique("nobody")
    assert f"there is no agent '{missing}'" in refused("list", "-a", missing)
    assert f"there is no agent '{missing}'" in refused("add", "-a", missing, "Bake.")
    assert f"there is no agent '{missing}'" in refused("requests", "-a", missing)


def test_the_open_goal_limit_holds(agent: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERSYN_AUTONOMY__MAX_OPEN_GOALS", "2")
    get_settings.cache_clear()
    added(agent, "One.")
    added(agent, "Two.")
    assert "already holds 2 open goals" in refused("add", "-a", agent, "Three.")
    assert len(listed(agent)) == 2
