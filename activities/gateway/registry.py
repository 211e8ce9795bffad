"""The model registry: which provider and model serve each task type.

With no API key configured everything runs on the in-process local model; with
``ANTHROPIC_API_KEY`` or ``OPENAI_API_KEY`` set, that provider is used (a strong model for
reasoning, critique and revision; a fast model for summarising, rating, classifying and
deciding). ``PERSYN_PROVIDER`` forces a choice and ``PERSYN_MODELS__<TASK>`` overrides a task.
Each provider also has a call plan (:mod:`activities.gateway.plans`): how its stages run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from activities.gateway.plans import default_plan
from schemas.models import CallPlan, ModelBinding, ModelTier, ProviderName, TaskType
from schemas.settings import Settings

FAST_TASKS = frozenset(
    {
        TaskType.SUMMARIZE,
        TaskType.RATE,
        TaskType.CLASSIFY,
        TaskType.DECIDE,
        TaskType.EMBED,
        TaskType.OBSERVE,
        TaskType.EMOTION,
        TaskType.RESIDUE,
        TaskType.FOLD,
        TaskType.RECALL,
        TaskType.CAPTION,
        TaskType.VOICE,
    }
)

VISION_PROVIDERS = frozenset({ProviderName.ANTHROPIC, ProviderName.OPENAI})
"""Providers whose default models read pictures: their caption binding declares vision. A
server of the user's own reads them only when its binding says so (``PERSYN_MODELS__CAPTION``)."""

_DEFAULTS: dict[ProviderName, tuple[tuple[str, int], tuple[str, int]]] = {
    # provider: ((strong model, context), (fast model, context))
    ProviderName.ANTHROPIC: (("claude-sonnet-4-5", 200_000), ("claude-haiku-4-5", 200_000)),
    ProviderName.OPENAI: (("gpt-4.1", 1_047_576), ("gpt-4.1-mini", 1_047_576)),
}


class RegistryError(ValueError):
    """The configuration names a provider that cannot be used; the message says what to set."""


def choose_provider(settings: Settings) -> ProviderName:
    """The provider the configuration selects (``auto``: an API key if set, else local)."""
    if settings.provider != "auto":
        return ProviderName(settings.provider)
    if settings.anthropic_api_key is not None:
        return ProviderName.ANTHROPIC
    if settings.openai_api_key is not None:
        return ProviderName.OPENAI
    if settings.openai_base_url:
        return ProviderName.OPENAI_COMPATIBLE
    return ProviderName.LOCAL


def _binding(provider: ProviderName, task: TaskType, settings: Settings) -> ModelBinding:
    tier = ModelTier.FAST if task in FAST_TASKS else ModelTier.STRONG
    if provider in _DEFAULTS:
        strong, fast = _DEFAULTS[provider]
        model, window = fast if tier is ModelTier.FAST else strong
        vision = task is TaskType.CAPTION and provider in VISION_PROVIDERS
        return ModelBinding(
            provider=provider, model=model, context_window=window, tier=tier, vision=vision
        )
    if provider is ProviderName.OPENAI_COMPATIBLE:
        return ModelBinding(
            provider=provider,
            model=settings.openai_compatible_model,
            context_window=settings.openai_compatible_context_window,
            tier=tier,
        )
    if provider is ProviderName.LOCAL:
        return ModelBinding(
            provider=provider,
            model="smollm2-135m-instruct",
            context_window=settings.local_context_window,
            # A reply sized for chat; the call plan caps each stage (plans.local_plan).
            max_output_tokens=96,
            tier=tier,
        )
    return ModelBinding(provider=provider, model="scripted", context_window=8192, tier=tier)


@dataclass(frozen=True)
class ModelRegistry:
    """Task type to model binding, and each provider's call plan."""

    bindings: dict[TaskType, ModelBinding]
    plans: dict[ProviderName, CallPlan] = field(default_factory=dict)

    def binding(self, task: TaskType) -> ModelBinding:
        """The binding for ``task``."""
        return self.bindings[task]

    def plan(self, provider: ProviderName) -> CallPlan:
        """How ``provider`` runs its stages (its default plan unless configured)."""
        return self.plans.get(provider) or default_plan(provider)

    def runs(self, task: TaskType) -> bool:
        """Whether the plan of the provider serving ``task`` runs that stage."""
        return self.plan(self.binding(task).provider).stage(task).run

    def providers(self) -> set[ProviderName]:
        """Every provider some task uses."""
        return {binding.provider for binding in self.bindings.values()}

    @classmethod
    def from_settings(cls, settings: Settings) -> ModelRegistry:
        """Build the registry the configuration describes."""
        provider = choose_provider(settings)
        if provider is ProviderName.ANTHROPIC and settings.anthropic_api_key is None:
            raise RegistryError("PERSYN_PROVIDER=anthropic needs ANTHROPIC_API_KEY")
        if provider is ProviderName.OPENAI and settings.openai_api_key is None:
            raise RegistryError("PERSYN_PROVIDER=openai needs OPENAI_API_KEY")
        if provider is ProviderName.OPENAI_COMPATIBLE and not settings.openai_base_url:
            raise RegistryError("PERSYN_PROVIDER=openai-compatible needs PERSYN_OPENAI_BASE_URL")
        bindings = {task: _binding(provider, task, settings) for task in TaskType}
        bindings.update(settings.models)
        size = settings.detected.billions() if settings.detected is not None else None
        plans = {
            name: default_plan(name, billions=size)
            for name in {b.provider for b in bindings.values()}
        }
        plans.update(settings.call_plans)
        return cls(bindings=_fitted(bindings, plans), plans=plans)


def _fitted(
    bindings: dict[TaskType, ModelBinding], plans: dict[ProviderName, CallPlan]
) -> dict[TaskType, ModelBinding]:
    """Bindings whose window a plan's prompt cap narrows: prompts are assembled to fit it."""
    fitted = dict(bindings)
    for task, binding in bindings.items():
        stage = plans[binding.provider].stage(task)
        if stage.max_input_tokens is None:
            continue
        output = stage.max_output_tokens or binding.max_output_tokens
        window = min(binding.context_window, stage.max_input_tokens + output)
        fitted[task] = binding.model_copy(
            update={"context_window": window, "max_output_tokens": output}
        )
    return fitted
