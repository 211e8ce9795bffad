"""Settings -> dependencies -> Worker. No business logic lives here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker

from activities.admission import AdmissionActivities
from activities.asked_for import AskedFor
from activities.autonomy.wiring import build_autonomy
from activities.channels.adapters.base import ChannelAdapter
from activities.channels.adapters.registry import build_registry
from activities.channels.delivery import DeliveryActivities
from activities.channels.pacing import PacingActivities
from activities.channels.pickup import PickupActivities
from activities.channels.transmit import ChannelActivities
from activities.context.activities import ContextActivities
from activities.context.assembler import ContextAssembler
from activities.context.model import ContextSource
from activities.context.sources import (
    ClockSource,
    ConstraintsSource,
    DialogSource,
    DoneSource,
    OpeningSource,
    PersonaSource,
)
from activities.deliberation.critique import CritiqueActivities
from activities.deliberation.decide import DecideActivities
from activities.deliberation.guardrails import GuardrailCheck
from activities.deliberation.judge import JudgeActivities
from activities.deliberation.parked_source import ParkedSource
from activities.deliberation.parking import DeliberationActivities
from activities.deliberation.refine import RefineActivities
from activities.deliberation.review import ReviewActivities
from activities.emotion.activities import EmotionActivities
from activities.emotion.source import EmotionSource
from activities.gateway.base import Provider
from activities.gateway.factory import build_provider
from activities.gateway.gateway import ModelGateway
from activities.gateway.registry import ModelRegistry
from activities.generation import GenerationActivities
from activities.graph.extract import GraphActivities
from activities.graph.source import GraphSource
from activities.guardrails.wiring import build_guardrails
from activities.images.render import ImageActivities
from activities.images.source import renders_source
from activities.memory.consolidate import ConsolidationActivities
from activities.memory.encoder import Encoder
from activities.memory.encoders.factory import build_encoder
from activities.memory.folding import FoldingActivities
from activities.memory.recall import MemoryRecall
from activities.memory.remember import RememberActivities
from activities.memory.retention import RetentionActivities
from activities.memory.search.activities import DialogSearchActivities
from activities.memory.synthesizer import RecallSynthesizer
from activities.observations.activities import ObservationActivities
from activities.observations.source import ObservationsSource
from activities.residue.source import ResidueSource
from activities.residue.synthesis import ResidueActivities
from activities.runs import RunActivities
from activities.sandbox.delegation import DelegationActivities
from activities.sandbox.delegation_source import sandbox_reports_source
from activities.sandbox.factory import build_provider as build_execution_provider
from activities.sandbox.shared.mounts import shared_mounts
from activities.sandbox.shared.source import WorkspacesSource
from activities.scheduling.reminders import Reminders
from activities.senses.wiring import build_senses
from activities.skills.wiring import build_skills
from activities.store import StoreActivities
from activities.tools.approvals import ApprovalActivities, ApprovalPolicy
from activities.tools.mcp import ToolServers
from activities.tools.registry import Tool
from contract.policies import HEARTBEAT_FLUSH
from observability import tracing
from observability.metering.factory import build_meters
from observability.metering.hub import MeterHub, UsageMeter
from observability.metering.pricing import load_or_empty
from schemas.models import ProviderName, TaskType
from schemas.settings import Settings
from store.db import Database
from workers.runner import workflow_runner
from workflows.activation import ActivationWorkflow
from workflows.agent import AgentWorkflow
from workflows.call import CallWorkflow
from workflows.consolidation import ConsolidationWorkflow
from workflows.conversation import ConversationWorkflow
from workflows.deliberation import DeliberationWorkflow
from workflows.delivery import DeliveryWorkflow
from workflows.folding import FoldingWorkflow
from workflows.guardrail import GuardrailWorkflow
from workflows.heartbeat import HeartbeatWorkflow
from workflows.maintenance import MaintenanceWorkflow
from workflows.observations import ObservationWorkflow
from workflows.reminder import ReminderWorkflow
from workflows.render import RenderWorkflow
from workflows.residue import ResidueWorkflow
from workflows.sandbox_task import SandboxTaskWorkflow

WORKFLOWS: list[type] = [
    AgentWorkflow,
    ConversationWorkflow,
    ActivationWorkflow,
    DeliberationWorkflow,
    HeartbeatWorkflow,
    ReminderWorkflow,
    ConsolidationWorkflow,
    FoldingWorkflow,
    MaintenanceWorkflow,
    SandboxTaskWorkflow,
    RenderWorkflow,
    ObservationWorkflow,
    ResidueWorkflow,
    GuardrailWorkflow,
    DeliveryWorkflow,
    CallWorkflow,
]
"""Every workflow a Persyn worker runs."""

WORKER_POOL_SIZE = 20
"""Database connections a worker keeps open (and as many more it may open for a burst)."""


@dataclass
class Dependencies:
    """What the activities are built from; tests substitute providers here."""

    settings: Settings
    db: Database
    gateway: ModelGateway
    meters: MeterHub
    encoder: Encoder | None = None
    extra_sources: list[ContextSource] = field(default_factory=list)
    guardrails: list[GuardrailCheck] = field(default_factory=list)
    """Checks that may veto a reply before it is sent (none by default)."""
    extra_tools: list[Tool] = field(default_factory=list)
    """More platform tools for the agent (tests)."""
    extra_adapters: list[ChannelAdapter] = field(default_factory=list)
    """More channel adapters (tests)."""
    tool_servers: ToolServers | None = None
    """Connected MCP tool servers, whose tools join the registry (the worker connects them)."""

    async def aclose(self) -> None:
        """Flush meters and close clients and pools."""
        await self.meters.aclose()
        if self.tool_servers is not None:
            await self.tool_servers.aclose()
        await self.gateway.aclose()
        if self.encoder is not None:
            await self.encoder.aclose()
        await self.db.aclose()


def build_dependencies(
    settings: Settings,
    *,
    providers: dict[ProviderName, Provider] | None = None,
    meters: Sequence[UsageMeter] | None = None,
    dsn: str | None = None,
) -> Dependencies:
    """Build the database, gateway and meters the configuration describes.

    Args:
        settings: The configuration.
        providers: Use these providers instead of building them (tests, benchmarks).
        meters: Use these meters instead of the configured set.
        dsn: Database URL overriding the settings (tests).
    """
    # Context assembly alone reads about a dozen sources at once, beside the activities of the
    # exchange before: a pool below that peak closes its overflow connections on return and
    # opens (and authenticates) new ones for the next message.
    db = Database(dsn or settings.database_dsn(), pool_size=WORKER_POOL_SIZE)
    registry = ModelRegistry.from_settings(settings)
    if providers is None:
        providers = {name: build_provider(name, settings) for name in registry.providers()}
    # Observability hook: the configured meters, the price table and the tracer.
    hub = MeterHub(list(meters) if meters is not None else build_meters(settings, db))
    gateway = ModelGateway(
        registry,
        providers,
        meters=hub,
        timeout_seconds=settings.model_timeout_seconds,
        prices=load_or_empty(settings.price_table),
        tracing=tracing.setup(settings),
    )
    # Nothing loads or connects here: the encoder starts on first use and fails soft.
    encoder = build_encoder(settings)
    return Dependencies(settings=settings, db=db, gateway=gateway, meters=hub, encoder=encoder)


def activities(
    deps: Dependencies, client: Client | None = None, *, task_queue: str | None = None
) -> list[Callable[..., Any]]:
    """Every activity, bound to its dependencies.

    ``client`` is for schedules, impulses and deliveries; ``task_queue`` is where the
    workflows they start run (default: the settings').
    """
    # Skills (docs/tools.md): absent with a logged reason when unavailable; restores
    # every library's protected skills as the worker starts.
    skills = build_skills(deps.settings)
    # Autonomy: tools, reminders, goals and the heartbeat (docs/autonomy.md).
    autonomy = build_autonomy(
        deps.db,
        deps.gateway,
        deps.settings,
        client,
        encoder=deps.encoder,
        extra_tools=[*skills.tools, *deps.extra_tools, *_server_tools(deps)],
    )
    if deps.tool_servers is not None:
        # A tool server that comes up after the start adds its tools without a restart.
        deps.tool_servers.on_new_tool(autonomy.registry.register)
    generation = GenerationActivities(
        deps.db,
        deps.gateway,
        autonomy.registry,
        max_tool_rounds=deps.settings.autonomy.max_tool_rounds,
        # Which tool calls wait for a person's approval (docs/approvals.md).
        approvals=ApprovalPolicy(
            deps.db, deps.settings.approvals, sandbox_network=deps.settings.sandbox.network
        ),
    )
    # The emotional state after each exchange; it may decline optional requests (docs/emotion.md).
    emotion = EmotionActivities(deps.db, deps.gateway, deps.settings.emotion)
    sources: list[ContextSource] = [
        PersonaSource(),
        ConstraintsSource(),
        ClockSource(),
        DoneSource(),
        OpeningSource(deps.db),
        DialogSource(deps.db),
        *autonomy.sources,
        *(
            [
                MemoryRecall(
                    deps.db,
                    deps.encoder,
                    deps.settings.memory,
                    RecallSynthesizer(deps.gateway, deps.settings.memory),
                )
            ]
            if deps.encoder
            else []
        ),
        ObservationsSource(deps.db),
        ResidueSource(deps.db, deps.settings.residue),
        # The knowledge graph is optional and fails soft (docs/people.md).
        *([GraphSource(deps.db, deps.settings.graph)] if deps.settings.graph.enabled else []),
        ParkedSource(deps.db, deps.settings.deliberation),
        EmotionSource(emotion.mood),
        sandbox_reports_source(deps.db),
        WorkspacesSource(deps.db),
        renders_source(deps.db),
        *skills.sources,
        *deps.extra_sources,
    ]
    assembler = ContextAssembler(deps.db, deps.gateway.registry, sources)
    store = StoreActivities(deps.db)
    context = ContextActivities(assembler)
    # Guardrails (docs/guardrails.md): blocking rules and cooldowns screen each reply; the
    # rest run in the background after each exchange.
    guardrails = build_guardrails(deps.db, deps.settings.guardrails, deps.gateway)
    decide = DecideActivities(
        deps.settings.deliberation,
        [*guardrails.checks, *deps.guardrails],
        db=deps.db,
        mood=emotion.mood,
    )
    deliberation = DeliberationActivities(
        deps.db,
        deps.settings.deliberation,
        critique_runs=deps.gateway.runs(TaskType.CRITIQUE),
    )
    # The plan and the screen of one reply asked in one step (workflows/pipeline/review.py).
    review = ReviewActivities(deps.db, deliberation, decide)
    critique = CritiqueActivities(deps.db, deps.gateway, deps.settings.deliberation)
    refine = RefineActivities(deps.db, deps.gateway)
    judge = JudgeActivities(deps.db, deps.gateway)
    channels = ChannelActivities(deps.db, client, deps.settings.delivery)
    # Outbound delivery through the channel adapters, paced between agents (docs/channels.md).
    delivery = DeliveryActivities(
        deps.db,
        build_registry(
            deps.settings,
            client=client,
            task_queue=task_queue or deps.settings.task_queue,
            extra=deps.extra_adapters,
        ),
        deps.settings.pacing,
    )
    # What an integrator's pull acknowledges and takes from the outbox (docs/integration.md).
    pickup = PickupActivities(deps.db)
    # The token budget asked before a reply on a paced channel is generated.
    pacing = PacingActivities(deps.db, deps.settings.pacing)
    # An event made ready for its model call in one step of the agent's (schemas/admission.py).
    admission = AdmissionActivities(
        deps.db,
        store,
        assembler,
        pacing,
        asked_for=asked_for(deps, client),
        opening_turns=deps.settings.memory.opening_turns,
        senses=build_senses(deps.settings, deps.gateway, deps.meters),
    )
    formation = ConsolidationActivities(deps.db, deps.gateway, deps.encoder, deps.settings.memory)
    graph = GraphActivities(deps.db, deps.gateway, deps.settings.graph)
    retention = RetentionActivities(
        deps.db,
        deps.encoder,
        deps.settings.memory,
        client=client,
        span_file=deps.settings.span_file,
    )
    remember = RememberActivities(deps.db)
    # Memories folded into recollections, level by level (docs/memory.md, Levels).
    folding = FoldingActivities(deps.db, deps.gateway, deps.encoder, deps.settings.memory)
    # Facts about people, learned beside each consolidation (docs/people.md).
    observations = ObservationActivities(
        deps.db, deps.gateway, deps.encoder, deps.settings.observations
    )
    # What each conversation left behind, written as it closes (docs/memory.md, Residue).
    residue = ResidueActivities(deps.db, deps.gateway, deps.settings.residue)
    search = DialogSearchActivities(deps.db, deps.encoder)
    approvals = ApprovalActivities(
        deps.db,
        client,
        delivery=deps.settings.delivery,
        tell_the_person=deps.settings.approvals.tell_the_person,
    )
    runs = RunActivities(client)
    # Delegated sandbox tasks; the provider reaches its engine only when a task runs.
    delegation = DelegationActivities(
        deps.db,
        deps.gateway,
        build_execution_provider(
            deps.settings.sandbox,
            mounts=skills.sandbox_mounts,
            # Each agent's shared workspaces (docs/tools.md), looked up before each command.
            shared=shared_mounts(deps.db),
        ),
        delivery=deps.settings.delivery,
        encoder=deps.encoder,
    )
    # Image renders (docs/tools.md, Images): one usage record per image, priced per image.
    images = ImageActivities(
        deps.db,
        deps.settings.images,
        deps.settings.home / "images",
        meters=deps.meters,
        prices=load_or_empty(deps.settings.price_table),
        delivery=deps.settings.delivery,
    )
    return [
        store.lookup_agent,
        store.resolve_speaker,
        store.open_conversation,
        store.record_turn,
        store.close_conversation,
        store.record_outcome,
        admission.admit,
        admission.close,
        runs.termination,
        context.assemble,
        generation.generate,
        *autonomy.activities,
        approvals.ask,
        approvals.settle,
        decide.screen,
        judge.judge,
        emotion.classify,
        emotion.weigh_request,
        deliberation.plan,
        review.review,
        deliberation.park,
        deliberation.settle,
        critique.critique,
        refine.refine,
        channels.transmit,
        channels.send_reply,
        pacing.afford_reply,
        delivery.pace,
        delivery.deliver,
        delivery.settle,
        pickup.pull_outbox,
        formation.formation_settings,
        formation.claim,
        formation.predecessors,
        formation.summarize,
        formation.rate,
        formation.classify,
        formation.store,
        formation.fail,
        folding.fold_plan,
        folding.fold,
        graph.extract,
        observations.extract,
        observations.reconcile,
        residue.synthesize,
        guardrails.activities.evaluate,
        guardrails.activities.notify,
        guardrails.activities.cool_down,
        retention.cull,
        retention.purge,
        retention.pending_formations,
        retention.index,
        remember.remember_harder,
        search.search_dialog,
        search.index_turns,
        delegation.think,
        delegation.step,
        delegation.deliver,
        images.render,
        images.deliver,
    ]


def asked_for(deps: Dependencies, client: Client | None) -> AskedFor:
    """What admission carries out when a person asks in words (``activities.asked_for``).

    "Please remember" on every plan; "remind me" only where the model is offered no tools to
    set a reminder itself (so it is never set twice), and with a client to schedule it; "what
    do you know about me?" where the plan confirms in words without the model.
    """
    registry = deps.gateway.registry
    plan = registry.plan(registry.binding(TaskType.RESPOND).provider)
    reminders = None
    if client is not None and not plan.offer_tools:
        reminders = Reminders(deps.db, client, deps.settings.autonomy)
    return AskedFor(
        deps.db,
        fact_limit=deps.settings.autonomy.max_facts_per_subject,
        reminders=reminders,
        answer_what_i_know=plan.confirm_done,
    )


def _server_tools(deps: Dependencies) -> list[Tool]:
    return deps.tool_servers.tools() if deps.tool_servers is not None else []


def build_worker(
    client: Client, deps: Dependencies, *, task_queue: str, share_workflow_code: bool = False
) -> Worker:
    """A Worker running every Persyn workflow and activity on ``task_queue``.

    ``share_workflow_code``: the sandbox imports the workflow modules once per process instead
    of once per run (``workers.runner``). The worker process does; tests keep the strict
    sandbox, which also catches clock and randomness reads at run time.
    """
    return Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        activities=activities(deps, client, task_queue=task_queue),
        workflow_runner=workflow_runner(
            sandboxed=deps.settings.workflow_sandbox, share_workflow_code=share_workflow_code
        ),
        max_concurrent_workflow_tasks=deps.settings.worker_workflow_tasks,
        max_heartbeat_throttle_interval=HEARTBEAT_FLUSH,
        max_concurrent_activities=64,
        max_concurrent_local_activities=64,
        graceful_shutdown_timeout=timedelta(seconds=10),
    )
