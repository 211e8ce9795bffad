"""Autonomy benchmarks: schedule firing to activation start, and the tool loop's overhead.

Runs on a private embedded stack (tuned dev server, embedded PostgreSQL) with a real worker
process and a zero-latency scripted model:

* a reminder's and a heartbeat's schedule fired (``trigger``) n times, one after another: from
  the schedule's action (server time) to the schedule-started workflow's start, to the
  ``ActivationWorkflow``'s start (server time) for the impulse it delivered;
* messages whose reply needs no tool, one tool call, or four tool calls in one round,
  interleaved: submit -> receipt per message; the overhead of a tool call is the difference;
* one tool call's work in-process (store the round, run ``calculate``, store the result),
  without Temporal, for scale.

Usage: ``python -m bench.autonomy_latency [--firings 30] [--messages 30]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

from temporalio.client import ScheduleActionExecutionStartWorkflow

from activities.scheduling.heartbeats import Heartbeats
from activities.scheduling.reminders import Reminders
from activities.tools.builtin.calculate import CalculateTool
from activities.tools.invoke import ToolActivities
from activities.tools.registry import ToolRegistry
from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from contract import names
from schemas.agents import AgentConfig, DeliberationMode
from schemas.autonomy import AutonomySettings, FiringResult
from schemas.events import ChannelRef, InboundEvent, Speaker
from schemas.ids import new_ulid
from schemas.models import ChatMessage, ToolCall
from schemas.tools import InvokeToolInput, ToolContext
from store.db import Database
from store.queries.tool_calls import save_round
from temporal import inbox
from temporal import schedules_autonomy as schedules

CHANNEL = ChannelRef(service="terminal", channel="bench")
SCRIPT = {
    "rules": [
        {"task": "respond", "after_tool": True, "reply": "Done."},
        {
            "task": "respond",
            "match": "^four tools",
            "tool_calls": [
                {"name": "calculate", "arguments": {"expression": f"{i}*7"}} for i in range(4)
            ],
        },
        {
            "task": "respond",
            "match": "^one tool",
            "tool_calls": [{"name": "calculate", "arguments": {"expression": "6*7"}}],
        },
    ]
}
VARIANTS = {
    "no tool": "no tools please",
    "one tool call": "one tool",
    "four calls, one round": "four tools",
}


def ms(delta: timedelta) -> float:
    return delta.total_seconds() * 1000


def line(name: str, values: list[float]) -> str:
    return (
        f"| {name} | {len(values)} | {percentile(values, 0.5):.1f} | "
        f"{percentile(values, 0.95):.1f} | {statistics.fmean(values):.1f} |"
    )


async def _marker_activation(stack: BenchStack, handle: str, event_id: str) -> str:
    while True:
        answer = await inbox.marker(stack.client, handle=handle, event_id=event_id)
        if answer.marker is not None and answer.marker.activation_id is not None:
            return answer.marker.activation_id
        await asyncio.sleep(0.01)


async def firings(
    stack: BenchStack, schedule_id: str, handle: str, n: int
) -> tuple[list[float], list[float]]:
    """(firing -> workflow start, firing -> activation start) per firing, in ms."""
    to_workflow, to_activation = [], []
    handle_ = stack.client.get_schedule_handle(schedule_id)
    for _ in range(n):
        # num_actions counts every firing; recent_actions keeps only the last ten.
        before = (await handle_.describe()).info.num_actions
        await handle_.trigger()
        while (info := (await handle_.describe()).info).num_actions == before:
            await asyncio.sleep(0.01)
        fired = info.recent_actions[-1]
        action = fired.action
        assert isinstance(action, ScheduleActionExecutionStartWorkflow)
        run = stack.client.get_workflow_handle(action.workflow_id, result_type=FiringResult)
        result = await run.result()
        assert result.delivered and result.event_id is not None
        activation_id = await _marker_activation(stack, handle, result.event_id)
        started = (await run.describe()).start_time
        activation = await stack.client.get_workflow_handle(
            names.activation_workflow_id(activation_id)
        ).describe()
        # scheduled_at is when the firing was due (for a trigger: when it was asked for).
        to_workflow.append(ms(started - fired.scheduled_at))
        to_activation.append(ms(activation.start_time - fired.scheduled_at))
    return to_workflow, to_activation


async def tool_messages(
    stack: BenchStack, queue: str, handle: str, n: int
) -> dict[str, list[float]]:
    """Submit -> receipt per message for each variant, interleaved."""
    found: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for i in range(n):
        for name, text in VARIANTS.items():
            event = InboundEvent(
                event_id=new_ulid(),
                channel=CHANNEL,
                speaker=Speaker(speaker_id="bench"),
                text=f"{text} {i}",
            )
            started = time.perf_counter()
            receipt = await inbox.submit(stack.client, handle=handle, event=event, task_queue=queue)
            found[name].append((time.perf_counter() - started) * 1000)
            assert receipt.marker is not None and receipt.marker.text is not None
    return found


async def in_process_call(stack: BenchStack, handle: str, n: int) -> list[float]:
    """Store a one-call round, run it through the invoke activity's code, store the result."""
    db = Database(stack.dsn)
    tools = ToolActivities(db, ToolRegistry([CalculateTool()]), AutonomySettings())
    context = ToolContext(
        agent=handle,
        activation_id=new_ulid(),
        conversation_id=new_ulid(),
        channel=CHANNEL,
        person_id=new_ulid(),
    )
    latencies = []
    for i in range(n):
        call_id = new_ulid()
        turn = ChatMessage(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id=f"c{i}", name="calculate", arguments={"expression": "6*7"})],
        )
        started = time.perf_counter()
        async with db.session() as session:
            await save_round(
                session,
                agent=handle,
                prompt_id=new_ulid(),
                activation_id=context.activation_id,
                round_=0,
                message=turn,
                call_ids=[call_id],
                at=datetime.now(UTC),
            )
        outcome = await tools.invoke(InvokeToolInput(call_id=call_id, context=context))
        latencies.append((time.perf_counter() - started) * 1000)
        assert outcome.ok
    await db.aclose()
    return latencies


async def main(n_firings: int, n_messages: int, *, keep: bool = True) -> None:
    async with bench_stack() as stack:
        queue = f"auto-{uuid.uuid4().hex[:6]}"
        script = stack.home / "script.json"
        script.write_text(json.dumps(SCRIPT))
        env = {"PERSYN_SCRIPTED_SCRIPT": str(script)}
        db = Database(stack.dsn)
        async with worker_process(stack, queue, env=env):
            handle = await new_agent(
                db, "a", AgentConfig(deliberation=DeliberationMode.OFF)
            )  # the loop only
            settings = stack.settings(task_queue=queue).autonomy
            now = datetime.now(UTC)
            # Warm up: the first message loads the encoder and opens the conversations.
            await tool_messages(stack, queue, handle, 2)
            reminder = await Reminders(db, stack.client, settings).create(
                agent=handle, objective="stand up", now=now, task_queue=queue, every_minutes=60
            )
            heartbeats = Heartbeats(db, stack.client, settings)
            await heartbeats.bootstrap(agent=handle, task_queue=queue, now=now)
            await firings(stack, schedules.reminder_schedule_id(reminder.reminder_id), handle, 2)
            r_workflow, r_activation = await firings(
                stack, schedules.reminder_schedule_id(reminder.reminder_id), handle, n_firings
            )
            h_workflow, h_activation = await firings(
                stack, names.heartbeat_schedule_id(handle), handle, max(n_firings // 3, 5)
            )
            await heartbeats.delete(agent=handle, task_queue=queue, now=now)
            messages = await tool_messages(stack, queue, handle, n_messages)
        calls = await in_process_call(stack, handle, 200)
        await db.aclose()

    none, one = statistics.median(messages["no tool"]), statistics.median(messages["one tool call"])
    four = statistics.median(messages["four calls, one round"])
    body = f"""`python -m bench.autonomy_latency --firings {n_firings} --messages {n_messages}`:
private embedded stack (tuned dev server, embedded PostgreSQL), a real worker process, a
zero-latency scripted model, deliberation off. Firing = the schedule's `trigger`; times are the
server's, from the firing's scheduled time to each workflow's start.

| schedule firing to ... (ms) | n | median | p95 | mean |
|---|---|---|---|---|
{line("reminder: ReminderWorkflow start", r_workflow)}
{line("reminder: ActivationWorkflow start", r_activation)}
{line("heartbeat: HeartbeatWorkflow start", h_workflow)}
{line("heartbeat: ActivationWorkflow start", h_activation)}

| message, submit -> receipt (ms) | n | median | p95 | mean |
|---|---|---|---|---|
{line("no tool", messages["no tool"])}
{line("one tool call (two model rounds)", messages["one tool call"])}
{line("four calls in one round", messages["four calls, one round"])}
{line("one call in-process, no Temporal (store, run, store)", calls)}

Tool-loop overhead with a zero-latency model: a first tool call adds {one - none:.0f} ms (its
activity plus a second model round); each further call in the same round adds
{(four - one) / 3:.0f} ms (calls of a round run concurrently)."""
    if keep:
        record("Autonomy: schedule firing to activation, tool-loop overhead", body)
    else:
        print(body)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--firings", type=int, default=30)
    parser.add_argument("--messages", type=int, default=30)
    parser.add_argument("--no-record", action="store_true", help="Print only (a smoke run).")
    args = parser.parse_args()
    asyncio.run(main(args.firings, args.messages, keep=not args.no_record))
