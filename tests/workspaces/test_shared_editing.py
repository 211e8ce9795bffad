"""Two agents edit one document in turns through their sandboxes, and each knows who wrote what.

The sandbox is the session's private Docker engine (skipped by name without one, a failure
under ``PERSYN_REQUIRE_DOCKER=1``); the models are scripted; Temporal and PostgreSQL are real.
"""

from __future__ import annotations

import asyncio

from sqlmodel import col, select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from schemas.models import TaskType
from store.tables import MemoryRecord
from tests.fences import holding
from tests.harness import Stack
from tests.sandbox.delegation import new_agent, run_task, sandbox_worker
from tests.sandbox.engine import DockerEngine
from tests.workspaces.helpers import create, said_tools, shared_mounts, step, workspace_name
from usecases import workspaces

INTRO = "Tides are the slow breathing of the sea."
CONCLUSION = "So the moon keeps time for every harbour."


async def test_two_agents_edit_one_document_and_each_recalls_who_wrote_what(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    ws = workspace_name()
    doc = f"/shared/{ws}/essay.md"
    rules = [
        *step("write the intro", "write_file", path=doc, content=f"# Tides\n{INTRO}\n"),
        *step("add the conclusion", "run_command", command=f"printf '{CONCLUSION}\\n' >> {doc}"),
        *step("read the essay", "read_file", path=doc),
        ScriptRule(task="respond", after_tool=True, reply="Here is the log."),
        ScriptRule(
            task="respond",
            match="who changed",
            after_tool=False,
            tool_calls=[ScriptToolCall(name="workspace_log", arguments={"workspace": ws})],
        ),
        # A later turn answers from what its prompt holds: the contribution it remembers.
        ScriptRule(task="respond", system_match="I added essay.md", reply="I wrote the intro."),
        ScriptRule(task="respond", system_match="I modified essay.md", reply="I wrote the end."),
    ]

    def remembers_the_other(other: str, kind: str) -> ScriptRule:
        # Asked about the other's part, it answers from its memory of reading the log.
        return ScriptRule(
            task="respond",
            match="what did the other",
            system_match=f"log that {other} {kind} essay.md",
            reply=f"{other} {kind} it.",
        )

    async with sandbox_worker(client, stack, docker_engine, rules=rules) as h:
        ada, bo = await new_agent(h), await new_agent(h)
        h.provider.script.rules[:0] = [
            remembers_the_other(bo, "modified"),
            remembers_the_other(ada, "added"),
        ]
        await create(h.deps.settings, ws, f"{ada}:rw", f"{bo}:rw")

        # In turns: Ada writes the document, then Bo appends to it with a shell command.
        first = await run_task(h, ada, "Please write the intro of our essay.")
        assert first.status == "done", first.text
        second = await run_task(h, bo, "Please add the conclusion to our essay.")
        assert second.status == "done", second.text
        assert shared_mounts(docker_engine, ada) == {f"/shared/{ws}": "rw"}
        assert shared_mounts(docker_engine, bo) == {f"/shared/{ws}": "rw"}

        # Each edit is in the log under its author, with what it added.
        log = await workspaces.workspace_log(settings=h.deps.settings, name=ws)
        assert [(c.agent, c.path, c.kind.value, c.lines_added, c.lines_removed) for c in log] == [
            (ada, "essay.md", "added", 2, 0),
            (bo, "essay.md", "modified", 1, 0),
        ]
        assert INTRO in log[0].excerpt and log[1].excerpt == CONCLUSION
        assert log[1].bytes_after == log[0].bytes_after + len(CONCLUSION) + 1

        # Both see the whole document; a shared file's text reaches the model fenced.
        read = await run_task(h, ada, "Please read the essay.")
        assert INTRO in read.text and CONCLUSION in read.text
        [fenced] = holding(h.provider.last(TaskType.SANDBOX).messages[-1].content, CONCLUSION)
        assert fenced.source == "workspace"

        # Through the tool, each sees its own change and the other's.
        for agent in (ada, bo):
            [seen] = await said_tools(h, agent, "Who changed the essay?")
            [entry] = seen["workspaces"]
            assert [(c["agent"], c["kind"]) for c in entry["changes"]] == [
                (ada, "added"),
                (bo, "modified"),
            ]

        # Each remembers its own contribution, in its own words, and what it saw of the other's
        # (once: reading the log again adds nothing).
        [again] = await said_tools(h, ada, "Who changed the essay?")
        assert len(again["workspaces"][0]["changes"]) == 2
        async with h.db.session() as session:
            memories = {
                agent: [
                    m.summary
                    for m in await session.exec(
                        select(MemoryRecord)
                        .where(col(MemoryRecord.agent) == agent)
                        .where(col(MemoryRecord.tags).contains(["workspace"]))
                        .order_by(col(MemoryRecord.created_at))
                    )
                ]
                for agent in (ada, bo)
            }
        assert memories == {
            ada: [
                f'In the shared workspace {ws} I added essay.md (+2/-0 lines): "# Tides\n{INTRO}".',
                f"I read in the shared workspaces' log that {bo} modified essay.md in {ws} "
                f'(+1/-0 lines): "{CONCLUSION}".',
            ],
            bo: [
                f'In the shared workspace {ws} I modified essay.md (+1/-0 lines): "{CONCLUSION}".',
                f"I read in the shared workspaces' log that {ada} added essay.md in {ws} "
                f'(+2/-0 lines): "# Tides\n{INTRO}".',
            ],
        }

        # On a later turn, the memory is recalled into the prompt, fenced, and answers.
        reply = await h.say(ada, "What did you write in our essay about tides?")
        assert reply.marker is not None and reply.marker.text == "I wrote the intro."
        system = h.provider.last(TaskType.RESPOND).system
        assert [f.source for f in holding(system, "I added essay.md")] == ["memory"]
        # Its prompt also names the workspace, its mode, the other member and the latest change.
        [listed] = holding(system, f"/shared/{ws}: you read-write, with {bo} (rw)")
        assert (
            listed.source == "workspaces" and f"last change: {bo} modified essay.md" in listed.body
        )
        reply = await h.say(bo, "What did you write in our essay about tides?")
        assert reply.marker is not None and reply.marker.text == "I wrote the end."
        # And what the other wrote, from the memory of reading the log.
        reply = await h.say(ada, "And what did the other agent do to our essay about tides?")
        assert reply.marker is not None and reply.marker.text == f"{bo} modified it."
        reply = await h.say(bo, "And what did the other agent do to our essay about tides?")
        assert reply.marker is not None and reply.marker.text == f"{ada} added it."


async def test_overlapping_edits_are_each_put_down_to_their_author(
    client: Client, stack: Stack, docker_engine: DockerEngine
) -> None:
    ws = workspace_name()
    doc = f"/shared/{ws}/log.txt"
    rules = [
        # The slow edit's command spans the quick one's, were they let run side by side.
        *step("slow edit", "run_command", command=f"sleep 2; echo slow-line >> {doc}"),
        *step("quick edit", "run_command", command=f"echo quick-line >> {doc}"),
    ]
    async with sandbox_worker(client, stack, docker_engine, rules=rules) as h:
        ada, bo = await new_agent(h), await new_agent(h)
        await create(h.deps.settings, ws, f"{ada}:rw", f"{bo}:rw")
        await asyncio.gather(
            run_task(h, ada, "Please make the slow edit."),
            run_task(h, bo, "Please make the quick edit."),
        )
        log = await workspaces.workspace_log(settings=h.deps.settings, name=ws)
        assert sorted((c.agent, c.excerpt, c.lines_added) for c in log) == sorted(
            [(ada, "slow-line", 1), (bo, "quick-line", 1)]
        )
