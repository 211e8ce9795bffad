"""The published wire contract: each wire model's JSON Schema, and an index of the handlers.

An integrator in any language drives an agent with only a Temporal client: a workflow ID, a
handler name and a JSON payload. Persyn's pydantic data converter exchanges plain JSON
(``json/plain`` payloads holding ``model.model_dump(mode="json")``), so a JSON Schema per model
is the whole wire contract. :func:`documents` builds one schema (draft 2020-12) per model
defined in ``schemas`` and ``index.json``, which names each workflow's ID pattern and the
model every update, signal and query takes and returns (see docs/integration.md);
``persyn schema export`` (``cli/schema.py``) writes them. It lives with the names it
publishes, above ``schemas`` (whose models it describes), and does no I/O.

The handler table here is declarative; tests check it against the workflow definitions, so it
cannot drift from what the workers actually register.

The schemas carry every rule the workers enforce that JSON Schema can state: text lengths and
forbidden characters (:mod:`schemas.text`), ID patterns (:mod:`schemas.ids`), and time zones (a
``date-time`` the workers require to be timezone-aware gets a pattern that demands an offset).
``documents(public=True)`` holds only what an integrator needs: the public handlers' models
and the agent workflow's start input.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema
from pydantic_settings import BaseSettings

import schemas
from contract import names
from schemas.activation import ActivationFinished, ActivationInput, ActivationResult
from schemas.agents import AgentStatus, AgentStatusQuery, AgentWorkflowInput
from schemas.approvals import ApprovalDecision, DecideApprovalInput
from schemas.autonomy import FiringInput, FiringResult
from schemas.contacts import PersonFolded
from schemas.conversation import (
    ConversationClosed,
    ConversationInput,
    ExchangeDone,
    InboundTurn,
    RememberNow,
    RememberNowResult,
    TurnTaken,
    WindowAnswer,
    WindowQuery,
)
from schemas.deliberation import DeliberationInput, DeliberationResult
from schemas.delivery import DeliveryInput, DeliveryResult
from schemas.erasure import ForgetTurns
from schemas.events import (
    CompletionMarker,
    ImpulseInput,
    InboundEvent,
    MarkerAnswer,
    MarkerQuery,
    Receipt,
    SubmitEventInput,
    Wire,
)
from schemas.folding import FoldingInput, FoldingResult
from schemas.guardrails import EndConversationRequest, GuardrailInput, GuardrailResult
from schemas.images import RenderInput, RenderResult
from schemas.memory_formation import (
    ConsolidationInput,
    ConsolidationResult,
    MaintenanceInput,
    MaintenanceResult,
)
from schemas.observations import ObserveInput, ObserveResult
from schemas.peers import PeerMessageInput
from schemas.pickup import PullOutboxInput, PullOutboxResult
from schemas.residue import ResidueInput, ResidueResult
from schemas.sandbox_task import SandboxReport, SandboxTaskInput
from schemas.voice import (
    CallBegan,
    CallConclusion,
    CallEnded,
    CallState,
    CallStateQuery,
    CallTurnSignal,
    ConclusionsTaken,
    HangUp,
    StartCallInput,
)

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
INDEX_FILE = "index.json"

SEALED_ENCODING = "binary/persyn-encrypted"
"""The encoding of a payload the codec sealed (``temporal.codec.ENCODING``; a test keeps them
equal, since the contract imports nothing of ``temporal``)."""

PAYLOAD_CODEC: dict[str, Any] = {
    "encoding": SEALED_ENCODING,
    "routes": ["/decode", "/encode", "/agents/{handle}/encode"],
    "description": (
        "With the payload codec on (the default) every payload the workers write is sealed: "
        "update results, query answers, inputs and results in histories. Send json/plain; "
        "decode what comes back through the deployment's codec endpoint (Temporal's remote "
        'codec protocol, POST {"payloads": [...]} in protobuf JSON), or read it as '
        "ciphertext. docs/integration.md, The codec endpoint from an SDK."
    ),
}
"""What ``index.json`` says about sealed payloads and the endpoint that opens them."""

AWARE_DATE_TIME = r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$"
"""An ISO 8601 date-time with its offset: the workers refuse one without a time zone."""

HandlerKind = Literal["update", "signal", "query"]
Caller = Literal["integrator", "persyn"]


@dataclass(frozen=True)
class WorkflowSpec:
    """A workflow type as an integrator addresses it."""

    type_name: str
    workflow_id: str
    input: type[BaseModel]
    result: type[BaseModel] | None
    description: str
    schedule: str | None = None
    """The schedule that starts it, if one does (its runs' IDs are the schedule ID plus time)."""


def _by_schedule(schedule_id: str) -> str:
    # Temporal names a scheduled run after its action's ID and the firing time.
    return f"{schedule_id}-{{firing time}}"


@dataclass(frozen=True)
class HandlerSpec:
    """An update, signal or query, and the models it takes and returns."""

    workflow: str
    kind: HandlerKind
    name: str
    input: type[BaseModel]
    result: type[BaseModel] | None
    caller: Caller
    description: str


WORKFLOWS: tuple[WorkflowSpec, ...] = (
    WorkflowSpec(
        names.AGENT_WORKFLOW,
        names.agent_workflow_id("{handle}"),
        AgentWorkflowInput,
        None,
        "An agent's inbox and lock; runs as long as the agent exists.",
    ),
    WorkflowSpec(
        names.CONVERSATION_WORKFLOW,
        names.conversation_workflow_id("{ulid}"),
        ConversationInput,
        ConversationClosed,
        "One session on one channel, started by its agent; closes when idle.",
    ),
    WorkflowSpec(
        names.ACTIVATION_WORKFLOW,
        names.activation_workflow_id("{ulid}"),
        ActivationInput,
        ActivationResult,
        "One run of the response pipeline for one input, started by its conversation.",
    ),
    WorkflowSpec(
        names.DELIBERATION_WORKFLOW,
        names.deliberation_workflow_id("{activation ulid}"),
        DeliberationInput,
        DeliberationResult,
        "Deferred critique and refinement of a transmitted reply; parks its conclusion.",
    ),
    WorkflowSpec(
        names.CONSOLIDATION_WORKFLOW,
        names.consolidation_workflow_id("{ulid}"),
        ConsolidationInput,
        ConsolidationResult,
        "Turns a range of dialog into first-person memory records, as of its moment.",
    ),
    WorkflowSpec(
        names.MAINTENANCE_WORKFLOW,
        _by_schedule(names.maintenance_schedule_id("{handle}")),
        MaintenanceInput,
        MaintenanceResult,
        "Started by the agent's maintenance schedule: culling, retention, re-embedding.",
        schedule=names.maintenance_schedule_id("{handle}"),
    ),
    WorkflowSpec(
        names.HEARTBEAT_WORKFLOW,
        _by_schedule(names.heartbeat_schedule_id("{handle}")),
        FiringInput,
        FiringResult,
        "Started by the heartbeat schedule: sends the agent an internal heartbeat impulse.",
        schedule=names.heartbeat_schedule_id("{handle}"),
    ),
    WorkflowSpec(
        names.REMINDER_WORKFLOW,
        _by_schedule(names.reminder_schedule_id("{ulid}")),
        FiringInput,
        FiringResult,
        "Started by a reminder's schedule: sends the objective as an internal impulse.",
        schedule=names.reminder_schedule_id("{ulid}"),
    ),
    WorkflowSpec(
        names.SANDBOX_TASK_WORKFLOW,
        names.sandbox_task_workflow_id("{ulid}"),
        SandboxTaskInput,
        SandboxReport,
        "A delegated code-execution task in the agent's sandbox; reports to the conversation.",
    ),
    WorkflowSpec(
        names.RENDER_WORKFLOW,
        names.render_workflow_id("{ulid}"),
        RenderInput,
        RenderResult,
        "One image render; delivers the picture to the conversation and notes it.",
    ),
    WorkflowSpec(
        names.OBSERVATION_WORKFLOW,
        names.observation_workflow_id("{ulid}"),
        ObserveInput,
        ObserveResult,
        "Learns facts about people from a stretch of a conversation, beside its consolidation.",
    ),
    WorkflowSpec(
        names.RESIDUE_WORKFLOW,
        names.residue_workflow_id("{ulid}"),
        ResidueInput,
        ResidueResult,
        "Notes what a conversation that just closed left behind: at most seven descriptive items.",
    ),
    WorkflowSpec(
        names.FOLDING_WORKFLOW,
        names.folding_workflow_id("{handle}"),
        FoldingInput,
        FoldingResult,
        "Folds an agent's memories into recollections of the next level, oldest first.",
    ),
    WorkflowSpec(
        names.GUARDRAIL_WORKFLOW,
        names.guardrail_workflow_id("{activation ulid}"),
        GuardrailInput,
        GuardrailResult,
        "Evaluates the background guardrails on one exchange and carries out their actions.",
    ),
    WorkflowSpec(
        names.DELIVERY_WORKFLOW,
        names.delivery_workflow_id("{outbox ulid}"),
        DeliveryInput,
        DeliveryResult,
        "Carries one outbox message to its channel once: paced between agents, retried, "
        "recorded as delivered, kept for pickup, blocked or failed.",
    ),
    WorkflowSpec(
        names.CALL_WORKFLOW,
        names.call_workflow_id("{call id}"),
        StartCallInput,
        CallState,
        "One live voice call, keyed by the transport's call ID: its conversation, direction "
        "and the background conclusions queued for speech, until hang-up or an idle spell.",
    ),
)
"""Every workflow type a Persyn worker runs; a schedule-started one names its schedule too."""

HANDLERS: tuple[HandlerSpec, ...] = (
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "update",
        names.SUBMIT,
        SubmitEventInput,
        Receipt,
        "integrator",
        "Queue an event and wait for its receipt, which carries the completion marker. "
        "Use the event_id as the update ID so a retry is answered, not repeated.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "signal",
        names.DELIVER,
        SubmitEventInput,
        None,
        "integrator",
        "Queue an event without waiting; poll the marker query for the outcome.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "query",
        names.MARKER,
        MarkerQuery,
        MarkerAnswer,
        "integrator",
        "The completion marker of an event, or whether it is still pending.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "query",
        names.STATUS,
        AgentStatusQuery,
        AgentStatus,
        "integrator",
        "Queue length, the event in the critical section and the open conversations.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "update",
        names.PULL_OUTBOX,
        PullOutboxInput,
        PullOutboxResult,
        "integrator",
        "Receive what the agent sent on its own to your service: acknowledge the message IDs "
        "of your last pull (ack), get those still kept for pickup. A message comes back until "
        "acknowledged, never after.",
    ),
    HandlerSpec(
        names.ACTIVATION_WORKFLOW,
        "update",
        names.DECIDE_APPROVAL,
        DecideApprovalInput,
        ApprovalDecision,
        "integrator",
        "Approve or refuse a tool call the activation waits for (its approval_id from "
        "`persyn approvals list`, the web API or the PersynApprovals search attribute); returns "
        "the decision as recorded. Use approval-{approval_id}-{approve|refuse} as the update ID.",
    ),
    HandlerSpec(
        names.CONVERSATION_WORKFLOW,
        "query",
        names.WINDOW,
        WindowQuery,
        WindowAnswer,
        "integrator",
        "The verbatim dialog window of an open conversation and who took part.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "update",
        names.PEER,
        PeerMessageInput,
        Receipt,
        "persyn",
        "Sent by the agent channel adapter: another agent's message, from its outbox.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "signal",
        names.IMPULSE,
        ImpulseInput,
        None,
        "persyn",
        "Sent by the heartbeat and reminder firings: an impulse on the agent's own channel.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "signal",
        names.ACTIVATION_FINISHED,
        ActivationFinished,
        None,
        "persyn",
        "Sent by an activation when its event leaves the agent's critical section.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "signal",
        names.CONVERSATION_CLOSED,
        ConversationClosed,
        None,
        "persyn",
        "Sent by a conversation when it closes.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "signal",
        names.CALL_BEGAN,
        CallBegan,
        None,
        "persyn",
        "Sent by a live call's workflow as it starts: the call takes the agent's lock once the "
        "event in flight ends, and only its channel's events are dispatched until it ends.",
    ),
    HandlerSpec(
        names.AGENT_WORKFLOW,
        "signal",
        names.CALL_ENDED,
        CallEnded,
        None,
        "persyn",
        "Sent by a live call's workflow as it ends: the call gives the agent's lock back.",
    ),
    HandlerSpec(
        names.CONVERSATION_WORKFLOW,
        "signal",
        names.INBOUND,
        InboundTurn,
        None,
        "persyn",
        "Sent by the agent to route an input to an open conversation.",
    ),
    HandlerSpec(
        names.CONVERSATION_WORKFLOW,
        "signal",
        names.TURN_TAKEN,
        TurnTaken,
        None,
        "persyn",
        "Sent by the agent after it admitted a person's turn to the conversation and started "
        "its activation.",
    ),
    HandlerSpec(
        names.CONVERSATION_WORKFLOW,
        "signal",
        names.EXCHANGE_DONE,
        ExchangeDone,
        None,
        "persyn",
        "Sent by an activation the agent started, when its exchange ends (the reply, if any).",
    ),
    HandlerSpec(
        names.CONVERSATION_WORKFLOW,
        "signal",
        names.FORGET_TURNS,
        ForgetTurns,
        None,
        "persyn",
        "Sent by dialog retention: drop the window's turns said before the cutoff.",
    ),
    HandlerSpec(
        names.CONVERSATION_WORKFLOW,
        "signal",
        names.PERSON_FOLDED,
        PersonFolded,
        None,
        "persyn",
        "Sent by `persyn contacts fold`: a participant is now the survivor of a fold.",
    ),
    HandlerSpec(
        names.CONVERSATION_WORKFLOW,
        "signal",
        names.END_CONVERSATION,
        EndConversationRequest,
        None,
        "persyn",
        "Sent by a guardrail that ends the conversation: close once queued inputs are answered.",
    ),
    HandlerSpec(
        names.CONVERSATION_WORKFLOW,
        "update",
        names.REMEMBER_NOW,
        RememberNow,
        RememberNowResult,
        "persyn",
        "Sent by `persyn down`: consolidate what was said since the last memory, as of now.",
    ),
    HandlerSpec(
        names.CALL_WORKFLOW,
        "signal",
        names.CALL_TURN,
        CallTurnSignal,
        None,
        "persyn",
        "Sent by the web channel's voice endpoint: a turn of the call was answered.",
    ),
    HandlerSpec(
        names.CALL_WORKFLOW,
        "signal",
        names.CALL_CONCLUSION,
        CallConclusion,
        None,
        "persyn",
        "Sent by the voice endpoint: a background run's conclusion, for the next answer.",
    ),
    HandlerSpec(
        names.CALL_WORKFLOW,
        "signal",
        names.CONCLUSIONS_TAKEN,
        ConclusionsTaken,
        None,
        "persyn",
        "Sent by the voice endpoint: the spoken answer wove in the queued conclusions.",
    ),
    HandlerSpec(
        names.CALL_WORKFLOW,
        "signal",
        names.HANG_UP,
        HangUp,
        None,
        "persyn",
        "The call ended.",
    ),
    HandlerSpec(
        names.CALL_WORKFLOW,
        "query",
        names.CALL_STATE,
        CallStateQuery,
        CallState,
        "persyn",
        "The call as it stands: its conversation, direction, turns and queued conclusions.",
    ),
)
"""Every handler a Persyn workflow registers; ``caller="persyn"`` ones are internal."""

PUBLIC_MODELS: tuple[type[BaseModel], ...] = (
    AgentWorkflowInput,
    InboundEvent,
    CompletionMarker,
    *dict.fromkeys(
        model
        for spec in HANDLERS
        if spec.caller == "integrator"
        for model in (spec.input, spec.result)
        if model is not None
    ),
)
"""The integrator bundle: the public handlers' models, the event and marker they carry, and
the agent workflow's input (for update-with-start)."""


class PersynJsonSchema(GenerateJsonSchema):
    """Pydantic's generator, plus the rules it leaves out that the workers enforce."""

    def datetime_schema(self, schema: core_schema.DatetimeSchema) -> JsonSchemaValue:
        """A ``date-time``; one the workers require to be timezone-aware demands an offset."""
        generated = super().datetime_schema(schema)
        if schema.get("tz_constraint") == "aware":
            generated = {
                **generated,
                "pattern": AWARE_DATE_TIME,
                "description": "ISO 8601 with a time zone, e.g. 2026-05-01T09:30:00Z",
            }
        return generated


def wire_models() -> dict[str, type[BaseModel]]:
    """Every pydantic model defined in the ``schemas`` package, by class name.

    Settings (configuration, never on the wire) and the ``Wire`` base class are left out.

    Raises:
        ValueError: Two modules define models of the same name (their files would collide).
    """
    found: dict[str, type[BaseModel]] = {}
    modules = pkgutil.walk_packages(schemas.__path__, prefix=f"{schemas.__name__}.")
    for info in sorted(modules, key=lambda module: module.name):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if not inspect.isclass(value) or not issubclass(value, BaseModel):
                continue
            if value.__module__ != module.__name__ or name.startswith("_"):
                continue  # imported from elsewhere, or private
            if issubclass(value, BaseSettings) or value is Wire:
                continue
            if name in found:
                raise ValueError(
                    f"two wire models are named {name} ({found[name].__module__} and "
                    f"{module.__name__}): rename one"
                )
            found[name] = value
    return dict(sorted(found.items()))


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The self-contained JSON Schema of one model (nested models under ``$defs``)."""
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        **model.model_json_schema(schema_generator=PersynJsonSchema),
    }


def _name(model: type[BaseModel] | None) -> str | None:
    return model.__name__ if model is not None else None


def _listed(model: type[BaseModel] | None, models: dict[str, type[BaseModel]]) -> str | None:
    # A workflow an integrator queries but never starts (a conversation) is listed without
    # its start input and result, whose schemas the public bundle leaves out.
    return model.__name__ if model is not None and model.__name__ in models else None


def _summary(model: type[BaseModel]) -> str:
    return (inspect.getdoc(model) or "").split("\n\n")[0].replace("\n", " ")


def index(models: dict[str, type[BaseModel]], *, public: bool = False) -> dict[str, Any]:
    """What ``index.json`` holds: workflows, handlers, search attributes and model files.

    Args:
        models: The models whose files are written beside the index.
        public: List only the agent workflow and the handlers integrators call.
    """
    handlers = [h for h in HANDLERS if not public or h.caller == "integrator"]
    # An integrator addresses the agent workflow and every workflow a public handler is on
    # (a conversation, for its `window` query).
    addressed = {names.AGENT_WORKFLOW, *(h.workflow for h in handlers)}
    workflows = [w for w in WORKFLOWS if not public or w.type_name in addressed]
    return {
        "description": "Persyn's wire contract: drive an agent with any Temporal client.",
        "payload_encoding": "json/plain",
        "payload_codec": PAYLOAD_CODEC,
        "task_queue": names.TASK_QUEUE,
        "search_attributes": {
            key.name: key.indexed_value_type.name.title().replace("_", "")
            for key in names.SEARCH_ATTRIBUTES
        },
        "workflows": [
            {
                "type": spec.type_name,
                "id": spec.workflow_id,
                "schedule": spec.schedule,
                "input": _listed(spec.input, models),
                "result": _listed(spec.result, models),
                "description": spec.description,
            }
            for spec in workflows
        ],
        "handlers": [
            {
                "name": spec.name,
                "kind": spec.kind,
                "workflow": spec.workflow,
                "input": _name(spec.input),
                "result": _name(spec.result),
                "caller": spec.caller,
                "description": spec.description,
            }
            for spec in handlers
        ],
        "models": {
            name: {"file": f"{name}.json", "module": model.__module__, "summary": _summary(model)}
            for name, model in models.items()
        },
    }


def documents(*, public: bool = False) -> dict[str, dict[str, Any]]:
    """Every file of the bundle by name: one JSON Schema per model, then ``index.json``.

    Nothing is written here (the contract does no I/O); ``persyn schema export`` writes them.

    Args:
        public: Only the integrator bundle: :data:`PUBLIC_MODELS` and an index of what they
            serve.
    """
    if public:
        models = {m.__name__: m for m in sorted(PUBLIC_MODELS, key=lambda m: m.__name__)}
    else:
        models = wire_models()
    files = {f"{name}.json": model_schema(model) for name, model in models.items()}
    files[INDEX_FILE] = index(models, public=public)
    return files
