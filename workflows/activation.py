"""``ActivationWorkflow``: one run of the response pipeline (spec §4).

Lifecycle: started by its agent once it admitted an input (by a ``ConversationWorkflow`` in runs
recorded before admission) as ``activation/{ulid}`` (a fresh ULID, never reused); on a paced
channel whose token budget is spent it ends silent at once, before any model call; otherwise it
runs assemble context -> respond -> deliberate -> decide -> transmit -> record (each step a
module of ``workflows.pipeline``); signals ``activation_finished`` to its agent, releasing the
agent's lock; then, released, takes stock of its emotional state and, when deliberation is
deferred, reconsiders the reply (an activation the agent started does so itself; one its
conversation started starts ``DeliberationWorkflow``), and returns the reply turn. It never
continues as new. The run owns its turn state (``TurnState``): each step returns what it
learned and the workflow hands that to the steps after it. Message: the ``decide_approval``
update approves or refuses a tool call the run waits for (``workflows.pipeline.approval``,
docs/approvals.md).
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from contract import attribution, names
from schemas.activation import ActivationInput, ActivationResult, Decision, Draft
from schemas.approvals import ApprovalDecision, DecideApprovalInput
from schemas.dialog import DialogTurn
from schemas.events import CompletionMarker, Outcome
from schemas.turn import TurnState
from workflows import handlers
from workflows.lock import release, tell_conversation
from workflows.pipeline import metrics, shape
from workflows.pipeline.afford import afford
from workflows.pipeline.approval import ApprovalGate
from workflows.pipeline.context import assemble
from workflows.pipeline.decide import decide
from workflows.pipeline.deliberate import (
    after_transmit,
    deferred,
    deliberate,
    start_deferred,
)
from workflows.pipeline.deliberate import in_run as deliberate_in_run
from workflows.pipeline.emotion import take_stock
from workflows.pipeline.respond import respond
from workflows.pipeline.review import PATCH as REPLY_STEPS_PATCH
from workflows.pipeline.review import review
from workflows.pipeline.transmit import record, send, transmit
from workflows.steps import one_line

STEP_FAILED = "StepFailed"
"""``ApplicationError.type`` of an activation whose step gave up; the message names the step."""


@workflow.defn(name=names.ACTIVATION_WORKFLOW)
class ActivationWorkflow:
    """Receive, retrieve, generate, deliberate, decide, transmit, record."""

    @workflow.init
    def __init__(self, data: ActivationInput) -> None:
        self._turn = TurnState()
        self._doing = "Starting"  # the step a failure names (``_step`` keeps it current)
        self._approvals = ApprovalGate(data)

    @workflow.update(
        name=names.DECIDE_APPROVAL,
        description="Approve or refuse a tool call this activation waits for; returns the "
        "decision as recorded (a repeated decision gets the same answer).",
    )
    @handlers.guarded_update(DecideApprovalInput)
    async def decide_approval(self, data: DecideApprovalInput) -> ApprovalDecision:
        """Decide one waiting approval; answered once the decision is recorded."""
        return await self._approvals.decide(data)

    @decide_approval.validator
    @handlers.guarded_validator(DecideApprovalInput, handler=names.DECIDE_APPROVAL)
    def _validate_decide_approval(self, data: DecideApprovalInput) -> None:
        self._approvals.validate(data)

    @workflow.run
    async def run(self, data: ActivationInput) -> ActivationResult:
        """Run the pipeline for one input."""
        attribution.bind(
            agent=data.agent,
            channel=data.channel.key,
            conversation=data.conversation_id,
            activation=data.activation_id,
            trigger=data.event.trigger.value,
        )
        try:
            return await self._pipeline(data)
        except (ActivityError, ApplicationError) as err:
            # A step gave up (a bounded database step, a bug): the run fails naming the step,
            # and its conversation releases the agent with a marker that says so.
            self._failed(data)
            raise ApplicationError(
                f"step '{self._doing}' failed: {one_line(err)}", type=STEP_FAILED
            ) from err
        except Exception:
            # A failed run says so in the Web UI's search attributes, then fails as usual.
            self._failed(data)
            raise

    def _failed(self, data: ActivationInput) -> None:
        workflow.upsert_search_attributes([names.OUTCOME.value_set(Outcome.FAILED.value)])
        self._count(data, Outcome.FAILED)

    def _count(self, data: ActivationInput, outcome: Outcome) -> None:
        metrics.count_turn(
            outcome,
            trigger=data.event.trigger.value,
            channel_kind=data.channel.service,
            latency=workflow.now() - workflow.info().workflow_start_time,
        )

    def _step(self, data: ActivationInput, doing: str) -> None:
        self._doing = doing
        workflow.set_current_details(
            f"{doing} for {data.person_name} on {data.channel.key} (event {data.event.event_id})"
        )

    async def _finish(
        self, data: ActivationInput, marker: CompletionMarker, reply: DialogTurn | None
    ) -> None:
        self._step(data, f"Done: {marker.outcome.value}")
        workflow.upsert_search_attributes([names.OUTCOME.value_set(marker.outcome.value)])
        self._count(data, marker.outcome)
        if not data.admitted:
            await release(data.agent, marker)
            return
        # Started by the agent: its conversation hears how the exchange ended (and, in runs
        # that carry it, the person's turn), beside the release: both leave in this task.
        await asyncio.gather(release(data.agent, marker), tell_conversation(data, reply))

    async def _withheld(self, data: ActivationInput, reason: str) -> ActivationResult:
        """End silent without generating: the channel's token budget is spent."""
        self._step(data, "Staying silent (budget spent)")
        marker = await record(data, Draft(text=""), Decision(speak=False, reason=reason), None)
        await self._finish(data, marker, None)
        return ActivationResult(marker=marker, reply=None)

    async def _pipeline(self, data: ActivationInput) -> ActivationResult:
        if data.admitted:  # admission asked the budget and (normally) assembled the prompt
            withheld = data.withheld
        else:
            self._step(data, "Checking the channel's token budget")
            withheld = await afford(data)
        if withheld is not None:
            return await self._withheld(data, withheld)
        prompt = data.prompt
        if prompt is None:
            self._step(data, "Assembling context")
            prompt = await assemble(data)
        self._step(data, "Generating a reply")
        draft = await respond(data, prompt, self._approvals)
        # Fewer local activities after the model: plan and screen in one, send and record in one.
        joined = data.admitted and shape.patched(data, REPLY_STEPS_PATCH)
        reviewed = await review(data, draft) if joined else None
        self._step(data, "Deliberating")
        deliberated = await deliberate(
            data, prompt, draft, reviewed.plan if reviewed is not None else None
        )
        final, self._turn = deliberated.draft, deliberated.turn
        self._step(data, "Deciding whether to speak")
        screening = reviewed.screening if reviewed is not None else None
        self._turn.verdict = verdict = await decide(data, final, screening)
        decision = Decision(speak=verdict.speak, reason=verdict.reason)
        self._step(data, "Transmitting" if decision.speak else "Staying silent")
        reply: DialogTurn | None = None
        if decision.speak and joined:
            reply, marker = await send(data, final)
        else:
            reply = await transmit(data, final) if decision.speak else None
            marker = await record(data, final, decision, reply)
        await self._finish(data, marker, reply)
        owed = await after_transmit(data, prompt, draft, self._turn, transmitted=reply is not None)
        if owed is not None and deliberate_in_run(data):
            # Released: the critics and the emotion reading run side by side in this run, not
            # as a workflow of their own (one start, two tasks and a visibility record fewer).
            self._step(data, f"Reconsidering the reply ({marker.outcome.value})")
            concluded, _ = await asyncio.gather(deferred(owed), take_stock(data, reply))
            return ActivationResult(marker=marker, reply=reply, deliberation=concluded)
        if owed is not None:
            await start_deferred(data, owed)
        await take_stock(data, reply)
        return ActivationResult(marker=marker, reply=reply)
