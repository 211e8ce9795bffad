"""Workflow IDs, task queues and search attributes: defined once, referenced by symbol."""

from __future__ import annotations

from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes

TASK_QUEUE = "persyn"
"""Default task queue of the workers (settings may rename it)."""

# Workflow type names: registered by ``@workflow.defn(name=...)`` and recorded in every history,
# so they never change.
AGENT_WORKFLOW = "AgentWorkflow"
CONVERSATION_WORKFLOW = "ConversationWorkflow"
ACTIVATION_WORKFLOW = "ActivationWorkflow"
DELIBERATION_WORKFLOW = "DeliberationWorkflow"
CONSOLIDATION_WORKFLOW = "ConsolidationWorkflow"
MAINTENANCE_WORKFLOW = "MaintenanceWorkflow"
HEARTBEAT_WORKFLOW = "HeartbeatWorkflow"
REMINDER_WORKFLOW = "ReminderWorkflow"
SANDBOX_TASK_WORKFLOW = "SandboxTaskWorkflow"
RENDER_WORKFLOW = "RenderWorkflow"
OBSERVATION_WORKFLOW = "ObservationWorkflow"
RESIDUE_WORKFLOW = "ResidueWorkflow"
FOLDING_WORKFLOW = "FoldingWorkflow"
GUARDRAIL_WORKFLOW = "GuardrailWorkflow"
DELIVERY_WORKFLOW = "DeliveryWorkflow"
CALL_WORKFLOW = "CallWorkflow"


def agent_workflow_id(handle: str) -> str:
    """``agent/{handle}``: the agent's inbox and lock."""
    return f"agent/{handle}"


def conversation_workflow_id(conversation_id: str) -> str:
    """``conversation/{ulid}``: one session."""
    return f"conversation/{conversation_id}"


def activation_workflow_id(activation_id: str) -> str:
    """``activation/{ulid}``: one run of the response pipeline (a fresh ULID, never reused)."""
    return f"activation/{activation_id}"


def consolidation_workflow_id(consolidation_id: str) -> str:
    """``consolidation/{ulid}``: one consolidation run."""
    return f"consolidation/{consolidation_id}"


def observation_workflow_id(observe_id: str) -> str:
    """``observe/{ulid}``: one extraction and reconciliation of facts about people."""
    return f"observe/{observe_id}"


def call_workflow_id(call_id: str) -> str:
    """``call/{call_id}``: one live voice call, keyed by the transport's call identifier."""
    return f"call/{call_id}"


def residue_workflow_id(residue_id: str) -> str:
    """``residue/{ulid}``: what one conversation left behind, carried forward as it closed."""
    return f"residue/{residue_id}"


def folding_workflow_id(handle: str) -> str:
    """``folding/{handle}``: the agent's folding pass; one runs at a time."""
    return f"folding/{handle}"


def guardrail_workflow_id(activation_id: str) -> str:
    """``guardrail/{ulid}``: the background guardrail evaluation of one activation's exchange."""
    return f"guardrail/{activation_id}"


def deliberation_workflow_id(activation_id: str) -> str:
    """``deliberation/{ulid}``: the deferred deliberation of one activation's reply."""
    return f"deliberation/{activation_id}"


def maintenance_schedule_id(handle: str) -> str:
    """``maintenance/{handle}``: the agent's maintenance schedule (and its runs' ID prefix)."""
    return f"maintenance/{handle}"


def sandbox_task_workflow_id(task_id: str) -> str:
    """``sandbox/{ulid}``: one delegated code-execution task."""
    return f"sandbox/{task_id}"


def delivery_workflow_id(message_id: str) -> str:
    """``delivery/{ulid}``: the delivery of one outbox row (its ULID), started once."""
    return f"delivery/{message_id}"


def render_workflow_id(render_id: str) -> str:
    """``render/{ulid}``: one image render."""
    return f"render/{render_id}"


HEARTBEAT_PREFIX = "heartbeat/"
REMINDER_PREFIX = "reminder/"


def heartbeat_schedule_id(handle: str) -> str:
    """``heartbeat/{handle}``: the agent's idle cognition."""
    return f"{HEARTBEAT_PREFIX}{handle}"


def reminder_schedule_id(reminder_id: str) -> str:
    """``reminder/{ulid}``; callers check the ID is a ULID, so it names no other schedule."""
    return f"{REMINDER_PREFIX}{reminder_id}"


AGENT = SearchAttributeKey.for_keyword("PersynAgent")
CHANNEL = SearchAttributeKey.for_keyword("PersynChannel")
CONVERSATION = SearchAttributeKey.for_keyword("PersynConversation")
TRIGGER = SearchAttributeKey.for_keyword("PersynTrigger")
OUTCOME = SearchAttributeKey.for_keyword("PersynOutcome")
GUARDRAILS = SearchAttributeKey.for_keyword_list("PersynGuardrails")
"""The guardrail rules that fired (on guardrail runs, and activations a blocking rule held)."""
APPROVALS = SearchAttributeKey.for_keyword_list("PersynApprovals")
"""The tool approvals an activation waits for now (empty once every one is decided)."""

SEARCH_ATTRIBUTES = (AGENT, CHANNEL, CONVERSATION, TRIGGER, OUTCOME, GUARDRAILS, APPROVALS)
"""Every custom search attribute Persyn sets; registered by ``persyn up``."""


def search_attributes(
    *,
    agent: str | None = None,
    channel: str | None = None,
    conversation: str | None = None,
    trigger: str | None = None,
) -> TypedSearchAttributes:
    """Search attributes for a workflow start; ``None`` values are left out."""
    values = ((AGENT, agent), (CHANNEL, channel), (CONVERSATION, conversation), (TRIGGER, trigger))
    return TypedSearchAttributes(
        [SearchAttributePair(key, value) for key, value in values if value is not None]
    )


# Handler names (signals, updates, queries), referenced by symbol on both sides.
SUBMIT = "submit"
DELIVER = "deliver"
IMPULSE = "impulse"
"""Internal: a heartbeat or reminder firing for the agent (never sent by clients)."""
PEER = "peer"
"""Internal: another agent's message, sent by the ``agent`` channel adapter only."""
ACTIVATION_FINISHED = "activation_finished"
CONVERSATION_CLOSED = "conversation_closed"
CALL_BEGAN = "call_began"
"""Internal: a live call asks for its agent's lock (sent by the call's ``CallWorkflow``)."""
CALL_ENDED = "call_ended"
"""Internal: a live call gives its agent's lock back (sent by the call's ``CallWorkflow``)."""
INBOUND = "inbound"
TURN_TAKEN = "turn_taken"
"""Internal: the agent admitted a person's turn to the conversation (``schemas.admission``)."""
EXCHANGE_DONE = "exchange_done"
"""Internal: an activation the agent started tells its conversation how the exchange ended."""
MARKER = "marker"
PULL_OUTBOX = "pull_outbox"
"""Public: an integrator acknowledges and takes the messages kept for its own service."""
STATUS = "status"
WINDOW = "window"
FORGET_TURNS = "forget_turns"
PERSON_FOLDED = "person_folded"
END_CONVERSATION = "end_conversation"
REMEMBER_NOW = "remember_now"
DECIDE_APPROVAL = "decide_approval"
"""Public: approve or refuse a tool call an activation waits for (``schemas.approvals``)."""
CALL_TURN = "call_turn"
"""Public: a live call's settled turn was answered (``schemas.voice``)."""
CALL_CONCLUSION = "call_conclusion"
"""Public: a background run's conclusion, queued for the call's next spoken answer."""
CONCLUSIONS_TAKEN = "conclusions_taken"
"""Public: the call's spoken answer wove in the queued conclusions."""
HANG_UP = "hang_up"
"""Public: the call ended."""
CALL_STATE = "call_state"
"""Public: a live call's state (``schemas.voice.CallState``)."""
