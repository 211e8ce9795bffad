"""``GuardrailWorkflow``: the background guardrails of one exchange, and their actions.

Lifecycle: started as ``guardrail/{activation ulid}`` by the conversation after an exchange on
which a rule fired or failed (a child with ``ABANDON``, never awaited: it is off the reply's
path). The conversation evaluated every background rule over the exchange's history in a local
activity, recording each firing once, and hands the run what it found, including the firings
blocking rules recorded in the screen, whose remaining actions run here too; runs started before
that evaluate in their own activity. Then, per firing and in the rule's order: ``notify`` POSTs
the supervisor's webhook (its row is already the inbox entry; the POST is retried for about a
day), ``cooldown`` starts or extends a cooldown, ``end_conversation`` signals the conversation
to close. The rule IDs that fired go into the ``PersynGuardrails`` search attribute. Every step
fails soft: a failed evaluation ends the run with nothing fired, a failed action is logged and
the others still run. No messages; it never continues as new.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import attribution, names
from contract.policies import DATABASE_ACTIVITY, WEBHOOK, summarized
from schemas.guardrails import (
    CoolDownInput,
    EndConversationRequest,
    GuardrailAction,
    GuardrailFiring,
    GuardrailInput,
    GuardrailResult,
    NotifySupervisorInput,
)

with workflow.unsafe.imports_passed_through():
    from activities.guardrails.activities import GuardrailActivities


@workflow.defn(name=names.GUARDRAIL_WORKFLOW)
class GuardrailWorkflow:
    """Evaluates the background rules on one exchange and carries out the firings' actions."""

    @workflow.run
    async def run(self, data: GuardrailInput) -> GuardrailResult:
        """Evaluate, tag the run with what fired, then act on each firing."""
        attribution.bind(
            agent=data.agent,
            channel=data.channel.key,
            conversation=data.conversation_id,
            activation=data.activation_id,
        )
        result = GuardrailResult()
        evaluation = data.evaluation
        if evaluation is None:  # started before the conversation evaluated the rules itself
            try:
                evaluation = await workflow.execute_activity_method(
                    GuardrailActivities.evaluate,
                    data,
                    **summarized(DATABASE_ACTIVITY, "evaluate the guardrails over recent history"),
                )
            except ActivityError as err:
                workflow.logger.warning("guardrail evaluation failed; nothing fired: %s", err)
                return result
        result.failed = evaluation.failed
        if not evaluation.firings:
            return result
        result.fired = list(dict.fromkeys(f.rule_id for f in evaluation.firings))
        workflow.upsert_search_attributes([names.GUARDRAILS.value_set(result.fired)])
        for firing in evaluation.firings:
            workflow.set_current_details(f"{firing.rule_id}: {firing.summary}")
            for action in firing.actions:
                if await self._act(data, firing, action):
                    result.done.append(f"{firing.rule_id}:{action.value}")
        return result

    async def _act(
        self, data: GuardrailInput, firing: GuardrailFiring, action: GuardrailAction
    ) -> bool:
        """Carry out one action; whether it was done (a failure is logged, never raised)."""
        try:
            if action is GuardrailAction.NOTIFY:
                await workflow.execute_activity_method(
                    GuardrailActivities.notify,
                    NotifySupervisorInput(firing_id=firing.firing_id),
                    **summarized(WEBHOOK, f"notify the supervisor: {firing.rule_id}"),
                )
            elif action is GuardrailAction.COOLDOWN:
                return await self._cool_down(data, firing)
            elif action is GuardrailAction.END_CONVERSATION:
                await workflow.get_external_workflow_handle(
                    names.conversation_workflow_id(data.conversation_id)
                ).signal(
                    names.END_CONVERSATION,
                    EndConversationRequest(
                        reason=f"guardrail {firing.rule_id}: {firing.summary}"[:300],
                        firing_id=firing.firing_id,
                    ),
                )
            # BLOCK happened in the screen, before the reply was sent.
            return True
        except asyncio.CancelledError:
            raise
        except Exception as err:
            workflow.logger.warning("guardrail %s: %s failed: %s", firing.rule_id, action, err)
            return False

    async def _cool_down(self, data: GuardrailInput, firing: GuardrailFiring) -> bool:
        spec = firing.cooldown
        if spec is None:
            return False
        key = data.person_id if spec.scope == "person" else data.channel.key
        if key is None:
            return False
        await workflow.execute_activity_method(
            GuardrailActivities.cool_down,
            CoolDownInput(
                agent=data.agent,
                firing_id=firing.firing_id,
                rule_id=firing.rule_id,
                scope=spec.scope,
                key=key,
                until=workflow.now() + timedelta(minutes=spec.minutes),
            ),
            **summarized(DATABASE_ACTIVITY, f"cool down ({spec.scope}, {spec.minutes:g} min)"),
        )
        return True
