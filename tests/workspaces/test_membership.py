"""Who may mount a shared workspace, and how: non-members, read-only members, removal, invites.

The sandbox is the session's private Docker engine; models are scripted.
"""

from __future__ import annotations

import json

import docker
import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from tests.harness import Stack
from tests.sandbox.delegation import new_agent, run_task, sandbox_worker
from tests.sandbox.engine import DockerEngine
from tests.workspaces.helpers import create, said_tools, shared_mounts, step, workspace_name
from usecases import workspaces


async def test_a_non_member_cannot_mount_read_or_write_it(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    ws = workspace_name()
    secret = f"/shared/{ws}/plan.md"
    rules = [
        *step("owner writes", "write_file", path=secret, content="the plan\n"),
        *step("outsider reads", "read_file", path=secret),
        *step("outsider writes", "write_file", path=secret, content="mine now\n"),
        *step("outsider lists", "list_files", path=f"/shared/{ws}"),
        *step("outsider looks", "run_command", command=f"cat {secret}"),
        ScriptRule(task="respond", after_tool=True, reply="Done."),
        ScriptRule(
            task="respond",
            match="the log",
            tool_calls=[ScriptToolCall(name="workspace_log", arguments={"workspace": ws})],
        ),
    ]
    async with sandbox_worker(client, stack, docker_engine, rules=rules) as h:
        owner, outsider = await new_agent(h), await new_agent(h)
        await create(h.deps.settings, ws, f"{owner}:rw")
        assert (await run_task(h, owner, "The owner writes the plan.")).status == "done"

        for objective in ("outsider reads", "outsider writes", "outsider lists"):
            report = await run_task(h, outsider, f"The {objective}.")
            assert f"not a member of the shared workspace '{ws}'" in report.text, objective
        looked = await run_task(h, outsider, "The outsider looks at it.")
        assert json.loads(looked.text.removeprefix("Result: "))["exit_code"] != 0

        # Its container has no such mount at all; the owner's has.
        assert shared_mounts(docker_engine, outsider) == {}
        assert shared_mounts(docker_engine, owner) == {f"/shared/{ws}": "rw"}
        [refused] = await said_tools(h, outsider, "Show me the log.")
        assert f"not a member of the shared workspace '{ws}'" in refused["error"]
        # Nothing the outsider did is in the log.
        log = await workspaces.workspace_log(settings=h.deps.settings, name=ws)
        assert [(c.agent, c.kind.value) for c in log] == [(owner, "added")]


async def test_a_read_only_member_reads_but_cannot_write(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    ws = workspace_name()
    doc = f"/shared/{ws}/notes.md"
    rules = [
        *step("writer writes", "write_file", path=doc, content="first line\n"),
        *step("reader reads", "read_file", path=doc),
        *step("reader writes", "write_file", path=doc, content="overwritten\n"),
        *step("reader appends", "run_command", command=f"echo sneaky >> {doc}"),
    ]
    async with sandbox_worker(client, stack, docker_engine, rules=rules) as h:
        writer, reader = await new_agent(h), await new_agent(h)
        await create(h.deps.settings, ws, f"{writer}:rw", f"{reader}:ro")
        assert (await run_task(h, writer, "The writer writes.")).status == "done"

        assert "first line" in (await run_task(h, reader, "The reader reads.")).text
        refused = await run_task(h, reader, "The reader writes.")
        assert f"you may only read the shared workspace '{ws}'" in refused.text
        # The mount itself is read-only: a shell command cannot write either.
        appended = await run_task(h, reader, "The reader appends.")
        result = json.loads(appended.text.removeprefix("Result: "))
        assert result["exit_code"] != 0 and "Read-only" in result["stderr"]
        assert shared_mounts(docker_engine, reader) == {f"/shared/{ws}": "ro"}

        assert "sneaky" not in (await run_task(h, reader, "The reader reads.")).text
        log = await workspaces.workspace_log(settings=h.deps.settings, name=ws)
        assert [c.agent for c in log] == [writer]


async def test_a_removed_member_loses_the_mount_at_its_next_command(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    ws = workspace_name()
    rules = [*step("look around", "run_command", command=f"ls /shared/{ws}")]
    async with sandbox_worker(client, stack, docker_engine, rules=rules) as h:
        agent = await new_agent(h)
        await create(h.deps.settings, ws, f"{agent}:rw")
        first = await run_task(h, agent, "Please look around.")
        assert json.loads(first.text.removeprefix("Result: "))["exit_code"] == 0
        assert shared_mounts(docker_engine, agent) == {f"/shared/{ws}": "rw"}

        await workspaces.remove_member(settings=h.deps.settings, name=ws, agent=agent)
        gone = await run_task(h, agent, "Please look around.")
        assert json.loads(gone.text.removeprefix("Result: "))["exit_code"] != 0
        assert shared_mounts(docker_engine, agent) == {}

        # Given back read-only, the container is made anew once more, with the new mode.
        await workspaces.add_member(settings=h.deps.settings, name=ws, member=f"{agent}:ro")
        await run_task(h, agent, "Please look around.")
        assert shared_mounts(docker_engine, agent) == {f"/shared/{ws}": "ro"}


async def test_a_read_write_member_invites_and_a_read_only_one_cannot(
    client: Client, stack: Stack, docker_engine: DockerEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, fresh, third = workspace_name(), workspace_name(), workspace_name()
    async with sandbox_worker(client, stack, docker_engine, rules=[]) as h:
        ada, bo, cy = await new_agent(h), await new_agent(h), await new_agent(h)
        await create(h.deps.settings, ws, f"{ada}:rw")

        def invite(workspace: str, agent: str, mode: str) -> ScriptRule:
            return ScriptRule(
                task="respond",
                match=f"invite {agent} to {workspace}",
                tool_calls=[
                    ScriptToolCall(
                        name="invite_to_workspace",
                        arguments={"workspace": workspace, "agent": agent, "mode": mode},
                    )
                ],
            )

        h.provider.script.rules[:] = [
            ScriptRule(task="respond", after_tool=True, reply="Done."),
            invite(ws, bo, "ro"),
            invite(ws, cy, "rw"),
            invite(fresh, cy, "rw"),
            invite(third, cy, "rw"),
        ]
        [invited] = await said_tools(h, ada, f"Please invite {bo} to {ws}.")
        assert (invited["agent"], invited["mode"], invited["created"]) == (bo, "ro", False)
        # A read-only member may not widen the circle.
        [refused] = await said_tools(h, bo, f"Please invite {cy} to {ws}.")
        assert f"only a read-write member of '{ws}'" in refused["error"]
        # A new name makes a new workspace, the inviter read-write in it.
        [made] = await said_tools(h, bo, f"Please invite {cy} to {fresh}.")
        assert made["created"] is True
        shown = await workspaces.show_workspace(settings=h.deps.settings, name=fresh)
        assert shown.created_by == bo
        assert {(m.agent, m.mode.value) for m in shown.members} == {(bo, "rw"), (cy, "rw")}
        members = (await workspaces.show_workspace(settings=h.deps.settings, name=ws)).members
        assert {(m.agent, m.mode.value) for m in members} == {(ada, "rw"), (bo, "ro")}

        # Each workspace is a volume: an agent makes only so many.
        monkeypatch.setattr("activities.tools.builtin.workspaces.MAX_MADE_BY_AN_AGENT", 1)
        [capped] = await said_tools(h, bo, f"Please invite {cy} to {third}.")
        assert "you have made 1 workspaces already" in capped["error"]
        assert third not in {
            w.name for w in await workspaces.list_workspaces(settings=h.deps.settings)
        }


async def test_deleting_a_workspace_unmounts_it_and_removes_its_files_and_record(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    ws = workspace_name()
    rules = [
        *step("write", "run_command", command=f"echo hi > /shared/{ws}/f && echo mine > keep"),
        *step("look", "run_command", command=f"cat keep; ls /shared/{ws}"),
    ]
    async with sandbox_worker(client, stack, docker_engine, rules=rules) as h:
        agent = await new_agent(h)
        await create(h.deps.settings, ws, f"{agent}:rw")
        await run_task(h, agent, "Please write.")
        assert shared_mounts(docker_engine, agent) == {f"/shared/{ws}": "rw"}

        deleted = await workspaces.delete_workspace(settings=h.deps.settings, name=ws)
        engine = docker.DockerClient(base_url=docker_engine.host)
        try:
            assert deleted.volume not in {v.name for v in engine.volumes.list()}
        finally:
            engine.close()
        names = {w.name for w in await workspaces.list_workspaces(settings=h.deps.settings)}
        assert ws not in names
        # Its next command runs in a container made anew, without the mount; /work is kept.
        looked = json.loads(
            (await run_task(h, agent, "Please look.")).text.removeprefix("Result: ")
        )
        assert looked["exit_code"] != 0 and looked["stdout"] == "mine\n"
        assert shared_mounts(docker_engine, agent) == {}
