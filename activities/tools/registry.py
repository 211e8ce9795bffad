"""The tool registry: every tool's name, description and input/output schemas, and its handler.

Platform tools run here (:class:`Tool`); provider-executed tools are specs only, advertised to
their provider, which returns their result inline. Both look alike to the model. The registry
is also the extensibility seam: external tool servers, skills and sandboxed code will register
ordinary :class:`Tool` objects (namespaced by server) without touching the tool loop.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from schemas.models import ProviderName, ToolExecutor, ToolSpec
from schemas.tools import ToolContext


class ToolError(Exception):
    """A failure the model should read and can act on (bad input, unknown contact, ...)."""


class ToolInput(BaseModel):
    """Base of tool inputs: unknown arguments are refused, so a model's typo is reported."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ToolRun:
    """What a handler sees besides its arguments."""

    context: ToolContext
    now: datetime
    call_id: str = ""
    """The stored call's ULID: a stable key for anything the call must do exactly once."""


class Tool(ABC):
    """A platform-executed tool.

    Subclasses set ``name``, ``description``, ``input_model`` (a :class:`ToolInput`) and
    optionally ``output_model``, and implement :meth:`run`. ``run`` raises :class:`ToolError`
    for a failure the model should read; any other exception is reported too, as a bug.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[ToolInput]]
    output_model: ClassVar[type[BaseModel] | None] = None
    timeout_seconds: ClassVar[float | None] = None
    """Overrides the configured tool timeout (seconds)."""

    def spec(self) -> ToolSpec:
        """The tool as advertised to models."""
        return ToolSpec(
            name=self.name,
            description=self.description,
            input_schema=_clean(self.input_model.model_json_schema()),
            output_schema=(
                _clean(self.output_model.model_json_schema()) if self.output_model else None
            ),
        )

    @abstractmethod
    async def run(self, call: ToolRun, args: Any) -> BaseModel | dict[str, Any] | str:
        """Do the work; ``args`` is a validated instance of ``input_model``."""


def _clean(schema: dict[str, Any]) -> dict[str, Any]:
    # The model reads the description; pydantic's title repeats the class name.
    schema = dict(schema)
    schema.pop("title", None)
    return schema


class ToolRegistry:
    """Tools by name; specs come out in a stable order so the cached prompt prefix holds."""

    def __init__(self, tools: Iterable[Tool] = (), provider_tools: Iterable[ToolSpec] = ()):
        self._tools: dict[str, Tool] = {}
        self._specs: dict[str, ToolSpec] = {}
        self._provider: dict[str, ToolSpec] = {}
        for tool in tools:
            self.register(tool)
        for spec in provider_tools:
            self.register_provider_tool(spec)

    def register(self, tool: Tool) -> None:
        """Add a platform tool.

        Raises:
            ValueError: The name is taken.
        """
        self._check_free(tool.name)
        self._tools[tool.name] = tool
        self._specs[tool.name] = tool.spec()  # built once: schemas do not change at run time

    def register_provider_tool(self, spec: ToolSpec) -> None:
        """Add a tool the provider runs (advertised only, no local handler).

        Raises:
            ValueError: The name is taken, or the spec is not provider-executed.
        """
        if spec.executor is not ToolExecutor.PROVIDER or not spec.provider_type:
            raise ValueError(f"{spec.name}: a provider tool needs executor=provider and a type")
        self._check_free(spec.name)
        self._provider[spec.name] = spec

    def _check_free(self, name: str) -> None:
        if name in self._tools or name in self._provider:
            raise ValueError(f"a tool named {name!r} is already registered")

    def get(self, name: str) -> Tool | None:
        """The platform tool called ``name``."""
        return self._tools.get(name)

    def is_provider_tool(self, name: str) -> bool:
        """Whether ``name`` is run by a provider (so never here)."""
        return name in self._provider

    def names(self) -> list[str]:
        """Every tool's name, sorted."""
        return sorted([*self._tools, *self._provider])

    def specs(self, provider: ProviderName | None = None) -> list[ToolSpec]:
        """What to advertise to ``provider``: platform tools plus that provider's own, by name.

        The in-process local model is offered none: it is too small to call tools reliably.
        """
        if provider is ProviderName.LOCAL:
            return []
        specs = list(self._specs.values())
        specs += [
            spec
            for spec in self._provider.values()
            if provider is None or spec.provider in (None, provider)
        ]
        return sorted(specs, key=lambda spec: spec.name)
