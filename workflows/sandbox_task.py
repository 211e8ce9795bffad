"""``SandboxTaskWorkflow``: one delegated code-execution task (``sandbox/{ulid}``), spec §4.6.

Lifecycle: started by the ``run_code`` tool as an independent workflow (the agent's turn only
waits for the start), it binds the calling activation's attribution, then loops: a model
round (``sandbox.think``), then each tool call it asked for as its own activity
(``sandbox.step``, ID ``round-{n}-{call}``, so a resumed task never re-runs a completed
command). It stops when the model answers in words, or at its round or time bound (one last
round then asks for words only), and delivers the report to the conversation
(``sandbox.deliver``). It never continues as new: its history is bounded by its rounds.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import attribution, names
from contract.policies import DATABASE_ACTIVITY, MODEL_CALL, SANDBOX_STEP, summarized
from schemas.models import ChatMessage, ToolCall
from schemas.sandbox_task import (
    DeliverSandboxReportInput,
    SandboxReport,
    SandboxStepInput,
    SandboxStepResult,
    SandboxTaskInput,
    SandboxThinkInput,
    SandboxThought,
)

with workflow.unsafe.imports_passed_through():
    from activities.sandbox.delegation import DelegationActivities


@workflow.defn(name=names.SANDBOX_TASK_WORKFLOW)
class SandboxTaskWorkflow:
    """A delegated agent loop in the sandbox, reporting back to the calling conversation."""

    @workflow.run
    async def run(self, data: SandboxTaskInput) -> SandboxReport:
        """Think, act, repeat within the bounds; then deliver the report."""
        fields = data.attribution.model_dump()
        attribution.bind(**fields)
        report = await self._loop(data)
        try:
            await workflow.execute_activity_method(
                DelegationActivities.deliver,
                DeliverSandboxReportInput(
                    task_id=data.task_id,
                    agent=data.agent,
                    channel=data.channel,
                    activation_id=data.activation_id,
                    report=report,
                ),
                **summarized(DATABASE_ACTIVITY, "deliver the report"),
            )
        except ActivityError as err:
            workflow.logger.warning("sandbox report not delivered: %s", err.cause or err)
        return report

    async def _loop(self, data: SandboxTaskInput) -> SandboxReport:
        bounds = data.bounds
        deadline = workflow.now() + timedelta(seconds=bounds.max_seconds)
        messages: list[ChatMessage] = []
        steps = 0
        status = "done"
        for round_ in range(bounds.max_rounds):
            out_of_time = workflow.now() >= deadline
            final = out_of_time or round_ == bounds.max_rounds - 1
            try:
                thought = await self._think(data, round_, final, messages)
            except ActivityError as err:
                text = f"the model could not be reached: {err.cause or err}"
                return self._report(data, "failed", text, round_, steps)
            if not thought.tool_calls:
                if final and round_ > 0:
                    status = "out_of_time" if out_of_time else "out_of_rounds"
                return self._report(data, status, thought.text, round_ + 1, steps)
            messages.append(
                ChatMessage(role="assistant", content=thought.text, tool_calls=thought.tool_calls)
            )
            for index, call in enumerate(thought.tool_calls):
                try:
                    result = await self._step(data, round_, index, call)
                except ActivityError as err:
                    text = f"the sandbox failed: {err.cause or err}"
                    return self._report(data, "failed", text, round_ + 1, steps)
                messages.append(
                    ChatMessage(
                        role="tool",
                        content=result.content,
                        tool_call_id=result.call_id,
                        is_error=result.is_error,
                    )
                )
                steps += 1
        return self._report(data, "out_of_rounds", "", bounds.max_rounds, steps)

    async def _think(
        self, data: SandboxTaskInput, round_: int, final: bool, messages: list[ChatMessage]
    ) -> SandboxThought:
        return await workflow.execute_activity_method(
            DelegationActivities.think,
            SandboxThinkInput(
                task_id=data.task_id,
                agent=data.agent,
                objective=data.objective,
                round=round_,
                final=final,
                messages=messages,
            ),
            **summarized(MODEL_CALL, f"round {round_ + 1}", activity_id=f"think-{round_}"),
        )

    async def _step(
        self, data: SandboxTaskInput, round_: int, index: int, call: ToolCall
    ) -> SandboxStepResult:
        return await workflow.execute_activity_method(
            DelegationActivities.step,
            SandboxStepInput(
                task_id=data.task_id,
                agent=data.agent,
                call=call,
                max_output_chars=data.bounds.max_output_chars,
                channel=data.channel,
            ),
            **summarized(SANDBOX_STEP, call.name, activity_id=f"round-{round_}-{index}"),
        )

    def _report(
        self, data: SandboxTaskInput, status: str, text: str, rounds: int, steps: int
    ) -> SandboxReport:
        cap = data.bounds.max_report_chars
        text = text.strip() or "(the task ended without a report)"
        if len(text) > cap:
            text = text[:cap] + " [...]"
        return SandboxReport(
            task_id=data.task_id, status=status, text=text, rounds=rounds, steps=steps
        )
