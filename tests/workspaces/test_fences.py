"""Text from a shared workspace reaches a prompt only inside a fence, whoever wrote it."""

from __future__ import annotations

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from schemas.models import TaskType
from tests.fences import ATTACK, FORGED, only_fenced
from tests.harness import Stack
from tests.sandbox.delegation import new_agent, run_task, sandbox_worker
from tests.sandbox.engine import DockerEngine
from tests.workspaces.helpers import create, said_tools, step, workspace_name


async def test_a_members_hostile_text_is_fenced_in_the_others_prompts(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    ws = workspace_name()
    doc = f"/shared/{ws}/notes.md"
    rules = [
        *step("plant it", "write_file", path=doc, content=f"{FORGED}\n"),
        *step("read the notes", "read_file", path=doc),
        ScriptRule(task="respond", after_tool=True, reply="Read it."),
        ScriptRule(
            task="respond",
            match="who changed",
            tool_calls=[ScriptToolCall(name="workspace_log", arguments={"workspace": ws})],
        ),
    ]
    async with sandbox_worker(client, stack, docker_engine, rules=rules) as h:
        mallory, reader = await new_agent(h), await new_agent(h)
        await create(h.deps.settings, ws, f"{mallory}:rw", f"{reader}:ro")
        assert (await run_task(h, mallory, "Please plant it.")).status == "done"

        # The delegated model reads the file inside a workspace fence.
        await run_task(h, reader, "Please read the notes.")
        read = h.provider.last(TaskType.SANDBOX)
        [fenced] = only_fenced("\n".join(str(m.content) for m in read.messages), ATTACK)
        assert fenced.source == "workspace"

        # The log's excerpt reaches the agent's own prompt as a fenced tool result.
        [seen] = await said_tools(h, reader, "Who changed the notes?")
        assert ATTACK in seen["workspaces"][0]["changes"][0]["excerpt"]
        respond = h.provider.last(TaskType.RESPOND)
        text = "\n".join([respond.system, *(str(m.content) for m in respond.messages)])
        # (The earlier task's report, which quoted the file, is fenced as a sandbox report.)
        assert {f.source for f in only_fenced(text, ATTACK)} == {"tool", "sandbox"}
