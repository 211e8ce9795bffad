"""Which mind serves the agents, said plainly: by the CLI (up, status, chat) and the web page.

A new user with no key gets the built-in tiny model, whose replies are shallow and which has
several stages switched off; nothing else on screen would tell them, nor how to do better. So
every place that shows the stack says which model replies, and, for the tiny model, what that
means and the three ways to a full agent, one line each.
"""

from __future__ import annotations

from activities.gateway.registry import ModelRegistry, RegistryError
from schemas.models import ProviderName, TaskType
from schemas.settings import Settings

STAGE_NAMES = {
    TaskType.CRITIQUE: "self-critique",
    TaskType.REFINE: "revision",
    TaskType.DECIDE: "the silence judgement",
    TaskType.OBSERVE: "observations of people",
    TaskType.RESIDUE: "what conversations left behind (residue)",
    TaskType.FOLD: "recollections in its own words (it joins its memories' openings)",
    TaskType.RECALL: "memories told as one account (they are listed line by line)",
    TaskType.EMOTION: "the emotion reading",
    TaskType.SUMMARIZE: "memories in its own words (it keeps what was said)",
    TaskType.RATE: "rating memories (a fixed rubric does)",
}
"""How the stages a plan may switch off are named to people."""

WAYS_TO_A_FULL_AGENT = (
    "a key: set ANTHROPIC_API_KEY or OPENAI_API_KEY, then persyn up",
    "a local server: run Ollama, LM Studio, llama.cpp's server or vLLM with a chat model, "
    "then persyn up (found on its usual port)",
    "a bigger model file: set PERSYN_LOCAL_MODEL_PATH to a GGUF file, then persyn up",
)


def describe(settings: Settings) -> list[str]:
    """The lines that say which mind serves, and for the tiny model what it means."""
    try:
        registry = ModelRegistry.from_settings(settings)
    except RegistryError as err:
        return [f"mind: not configured ({err})"]
    respond = registry.binding(TaskType.RESPOND)
    fast = registry.binding(TaskType.DECIDE)
    provider = respond.provider
    if settings.detected is not None and provider is ProviderName.OPENAI_COMPATIBLE:
        lines = [
            f"mind: {settings.detected.describe()}, found running by persyn up "
            "(PERSYN_PROVIDER=local for the built-in model)"
        ]
        off = _off(registry, provider)
        if off:  # a small model found on a server runs on the small-model plan
            lines.append(f"  a small model, planned as the tiny one: off on it: {', '.join(off)}")
        return lines
    if provider is ProviderName.LOCAL and settings.local_model_path is None:
        lines = [
            "mind: SmolLM2-135M, the built-in tiny model: replies are shallow and may not "
            "follow what was said",
        ]
        off = _off(registry, provider)
        if off:
            lines.append(f"  off on it: {', '.join(off)}")
        lines.append("  for a full agent, any one of:")
        lines.extend(f"  - {way}" for way in WAYS_TO_A_FULL_AGENT)
        return lines
    if provider is ProviderName.LOCAL:
        return [f"mind: {settings.local_model_path} on the built-in server"]
    if provider is ProviderName.OPENAI_COMPATIBLE:
        return [f"mind: {respond.model} at {settings.openai_base_url}"]
    models = respond.model if fast.model == respond.model else f"{respond.model}, {fast.model}"
    return [f"mind: {provider.value} ({models})"]


def _off(registry: ModelRegistry, provider: ProviderName) -> list[str]:
    """The stages, and tools, that ``provider``'s plan switches off, as people name them."""
    plan = registry.plan(provider)
    off = [name for task, name in STAGE_NAMES.items() if not plan.stage(task).run]
    if not plan.offer_tools:
        off.append("tools")
    return off
