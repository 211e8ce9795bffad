"""Hostile input at every door of shared workspaces: names, members, use cases, CLI and tools.

Each refuses in one line and records nothing; none needs the sandbox engine (the one that
would be asked is at an address where nothing answers).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from typer.testing import CliRunner

from activities.tools.builtin.deps import ToolDeps
from activities.tools.builtin.workspaces import InviteToWorkspace, ReadWorkspaceLog
from activities.tools.registry import Tool, ToolError, ToolRun
from cli.main import app
from schemas.ids import new_ulid
from schemas.settings import Settings, get_settings
from schemas.tools import ToolContext
from schemas.workspaces import (
    NAME_PATTERN,
    InvalidWorkspaceError,
    check_workspace_name,
    parse_member,
)
from store.db import Database
from store.queries.workspaces import list_workspaces
from tests.harness import Stack, terminal
from tests.schemas.test_hostile_text import hostile_text, json_values
from usecases import workspaces
from usecases.errors import UseCaseError

FEW = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
NOWHERE = "unix:///nonexistent/persyn-test/docker.sock"
names = st.one_of(hostile_text, st.from_regex(NAME_PATTERN, fullmatch=True))
values = st.one_of(json_values, names)
"""A tool argument: any JSON, or a well-formed name."""
members = st.one_of(
    hostile_text,
    st.builds(lambda h, m: f"{h}:{m}", st.from_regex(NAME_PATTERN, fullmatch=True), hostile_text),
)


@given(text=hostile_text)
def test_a_name_is_valid_or_refused_in_one_line(text: str) -> None:
    try:
        assert check_workspace_name(text) == text
    except InvalidWorkspaceError as error:
        assert "\n" not in str(error) and "workspace name" in str(error)


@given(text=members)
def test_a_member_is_parsed_or_refused_in_one_line(text: str) -> None:
    try:
        member = parse_member(text)
    except InvalidWorkspaceError as error:
        assert "\n" not in str(error) and str(error).startswith("member ")
    else:
        assert text.strip().startswith(member.agent)


@pytest.fixture
def offline(stack: Stack) -> Settings:
    """The stack's settings with a sandbox engine that does not answer."""
    return stack.settings(sandbox={"docker_host": NOWHERE})


@pytest.fixture
async def db(stack: Stack) -> AsyncIterator[Database]:
    database = Database(stack.dsn, pool_size=2)
    yield database
    await database.aclose()


async def _nothing_recorded(db: Database, name: str) -> None:
    async with db.autocommit() as session:
        assert name not in {w.name for w in await list_workspaces(session)}


@FEW
@given(name=names, member=st.lists(members, max_size=3))
async def test_any_create_is_refused_in_one_line_and_records_nothing(
    offline: Settings, db: Database, name: str, member: list[str]
) -> None:
    with pytest.raises(UseCaseError) as caught:
        await workspaces.create_workspace(settings=offline, name=name, members=member)
    assert "\n" not in str(caught.value)
    await _nothing_recorded(db, name)


@FEW
@given(name=names, member=members, limit=st.integers())
async def test_any_other_use_case_input_is_refused_in_one_line(
    offline: Settings, name: str, member: str, limit: int
) -> None:
    for call in (
        workspaces.show_workspace(settings=offline, name=name),
        workspaces.add_member(settings=offline, name=name, member=member),
        workspaces.remove_member(settings=offline, name=name, agent=member),
        workspaces.workspace_log(settings=offline, name=name, limit=limit, agent=member),
    ):
        with pytest.raises(UseCaseError) as caught:
            await call
        assert "\n" not in str(caught.value)


runner = CliRunner()


@pytest.fixture
def deployment(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's settings name the test's stack, and an engine that does not answer."""
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    monkeypatch.setenv("PERSYN_TEMPORAL_ADDRESS", stack.temporal_address)
    monkeypatch.setenv("PERSYN_EMBEDDED", "false")
    monkeypatch.setenv("PERSYN_SANDBOX__DOCKER_HOST", NOWHERE)
    get_settings.cache_clear()


def cli(*args: str) -> Any:
    """``persyn ARGS`` in a thread of its own (the CLI runs its own event loop)."""
    return asyncio.to_thread(runner.invoke, app, list(args))


@FEW
@given(name=names, member=members)
async def test_any_cli_input_is_refused_in_one_line(
    deployment: None, name: str, member: str
) -> None:
    if "\x00" in name + member:
        return  # no process can be given a NUL in its arguments
    for args in (
        ("create", "--member", member, "--", name),
        ("show", "--", name),
        ("add-member", "--", name, member),
        ("remove-member", "--", name, member),
        ("log", "--agent", member, "--", name),
    ):
        result = await cli("workspace", *args)
        assert result.exit_code in (1, 2), (args, result.output)
        if result.exit_code == 1:
            [line] = result.stderr.splitlines()
            assert line.startswith("error: "), line


async def test_the_cli_says_what_is_wrong(deployment: None) -> None:
    bad = await cli("workspace", "create", "My Essay")
    assert bad.exit_code == 1
    assert bad.stderr.strip() == (
        "error: workspace name 'My Essay' is invalid: use 2-32 lower-case letters, digits or "
        "'-', starting with a letter (e.g. 'essay')"
    )
    mode = await cli("workspace", "create", "essay", "--member", "ada:rwx")
    assert mode.stderr.strip() == (
        "error: member 'ada:rwx': the mode after ':' must be 'rw' or 'ro' (e.g. 'ada:rw')"
    )
    nobody = await cli("workspace", "show", "no-such-workspace")
    assert "there is no workspace 'no-such-workspace'" in nobody.stderr
    listed = await cli("workspace", "list")
    assert listed.exit_code == 0, listed.output


def _call(agent: str) -> ToolRun:
    context = ToolContext(
        agent=agent,
        activation_id=new_ulid(),
        conversation_id=new_ulid(),
        channel=terminal(),
        person_id=new_ulid(),
    )
    return ToolRun(context=context, now=datetime.now(UTC), call_id=new_ulid())


@FEW
@given(
    arguments=st.dictionaries(st.sampled_from(["workspace", "agent", "mode", "limit"]), json_values)
)
async def test_any_tool_input_is_refused_in_one_line(
    offline: Settings, db: Database, arguments: dict[str, Any]
) -> None:
    deps = ToolDeps(db=db, settings=offline, models=None)  # type: ignore[arg-type]
    tools: list[Tool] = [ReadWorkspaceLog(deps), InviteToWorkspace(deps)]
    for tool in tools:
        try:
            args = tool.input_model.model_validate(arguments)
        except ValidationError:
            continue  # the registry answers the model with the validation errors
        try:
            await tool.run(_call("ada-hostile"), args)
        except ToolError as error:
            assert "\n" not in str(error)
    if isinstance(arguments.get("workspace"), str):
        await _nothing_recorded(db, arguments["workspace"])
