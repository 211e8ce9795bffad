"""Every tool an agent could be offered, its source, and whether it is available and why not.

The operators' view behind ``persyn tools list``: a use case above the features it asks, so
``activities/tools/`` need not name the skills feature (which imports it) for it. It builds the
built-in registry as a worker does (without connecting anything) and asks each optional group
for its own availability: the web, the sandbox, skills and tool servers. The optional groups
are imported defensively, so a deployment (or a checkout) without one still lists the rest.
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType

from pydantic import TypeAdapter

from activities.gateway.providers.openai_tools import WEB_SEARCH_OPTIONS
from activities.gateway.registry import ModelRegistry
from activities.tools.approvals import when_tool_waits
from activities.tools.builtin import build_registry
from activities.tools.builtin.deps import ToolDeps
from activities.tools.mcp.tools import PREFIX as MCP_PREFIX
from activities.tools.registry import Tool
from activities.tools.web import availability as web_availability
from activities.tools.web import web_search_specs
from schemas.ids import AgentHandle
from schemas.models import ModelBinding, ProviderName, TaskType
from schemas.settings import Settings
from schemas.web import ToolAvailability
from store.db import Database

log = logging.getLogger(__name__)


def _tool_names(module: ModuleType) -> list[str]:
    """Names of the tools a module defines (class attributes: nothing is built)."""
    return sorted(
        value.name
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Tool)
        and value.__module__ == module.__name__
        and isinstance(getattr(value, "name", None), str)
    )


def _optional(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ImportError as err:  # that group is not installed here: it is simply not listed
        log.info("%s not importable: %s", module, err)
        return None


def _builtin(settings: Settings) -> list[ToolAvailability]:
    # No Temporal client here, so the reminder tools (which need the worker's) are named
    # from their classes; the database engine is created but never connected.
    deps = ToolDeps(
        db=Database(settings.database_dsn(), pool_size=1),
        settings=settings,
        models=ModelRegistry.from_settings(settings),
    )
    names = set(build_registry(deps).names())
    reminders = _optional("activities.tools.builtin.reminders")
    if reminders is not None:
        names.update(_tool_names(reminders))
    rows = [ToolAvailability(name=n, source="built-in", available=True) for n in sorted(names)]
    images = _optional("activities.tools.builtin.images")
    if images is not None:
        rows += images.image_availability(settings)
    return rows


async def _sandbox(settings: Settings) -> list[ToolAvailability]:
    code = _optional("activities.tools.builtin.code")
    if code is None:
        return []
    status = await code.code_tools_availability(settings)
    return [
        ToolAvailability(
            name=code.TOOL_NAME,
            source="sandbox",
            available=status.available,
            reason=status.reason or "",
        )
    ]


def _skills(settings: Settings, agent: str) -> list[ToolAvailability]:
    wiring = _optional("activities.skills.wiring")
    tools = _optional("activities.skills.tools")
    if wiring is None or tools is None:
        return []
    status = wiring.skills_status(settings)
    reason = status.reason or ""
    if status.available:
        library = wiring.SkillLibrary.from_settings(settings)
        if not library.folder(agent).is_dir():
            reason = "no library yet (made on the agent's first turn)"
    return [
        ToolAvailability(name=name, source="skill", available=status.available, reason=reason)
        for name in _tool_names(tools)
    ]


async def _servers(settings: Settings) -> list[ToolAvailability]:
    servers = _optional("activities.tools.mcp.servers")
    if servers is None or not settings.mcp.servers:
        return []
    out: list[ToolAvailability] = []
    for status in await servers.probe(settings.mcp):
        if status.available:
            # A flagged server the operator allowed says so on each of its tools.
            out += [
                ToolAvailability(
                    name=n, source=status.source, available=True, reason=status.reason or ""
                )
                for n in status.tools
            ]
        else:
            out.append(
                ToolAvailability(
                    name="*", source=status.source, available=False, reason=status.reason or ""
                )
            )
    return out


def _offered(name: str, binding: ModelBinding) -> str:
    """Why the provider tool ``name`` is not offered to ``binding``'s model, or nothing."""
    spec = next((s for s in web_search_specs(1) if s.name == name), None)
    if spec is None or spec.provider is not binding.provider:
        return f"not offered to {binding.provider} models"
    if spec.provider_type == WEB_SEARCH_OPTIONS and "search" not in binding.model:
        return f"{binding.model} is not an OpenAI search model"
    return ""


def _for_model(rows: list[ToolAvailability], binding: ModelBinding) -> list[ToolAvailability]:
    """What the agent's reply model can actually be offered."""
    if binding.provider is ProviderName.LOCAL:
        reason = "the local model is offered no tools"
        return [
            r.model_copy(update={"available": False, "reason": reason}) if r.available else r
            for r in rows
        ]
    out = []
    for row in rows:
        why = _offered(row.name, binding) if row.source == "provider" and row.available else ""
        out.append(row.model_copy(update={"available": False, "reason": why}) if why else row)
    return out


async def list_tools(*, settings: Settings, agent: str) -> list[ToolAvailability]:
    """Every tool ``agent`` could be offered, by source then name; never raises for a group.

    Raises:
        ValueError: ``agent`` is not an agent handle.
    """
    TypeAdapter(AgentHandle).validate_python(agent)
    rows = [
        *_builtin(settings),
        *web_availability(settings),
        *await _sandbox(settings),
        *_skills(settings, agent),
        *await _servers(settings),
    ]
    rows = _for_model(rows, ModelRegistry.from_settings(settings).bindings[TaskType.RESPOND])
    rows = [_with_approval(row, settings, agent) for row in rows]
    return sorted(rows, key=lambda r: (r.source != "built-in", r.source, r.name))


def _with_approval(row: ToolAvailability, settings: Settings, agent: str) -> ToolAvailability:
    """``row`` with when ``agent``'s calls of it wait for approval, under the current policy."""
    tool = row.name
    if row.source.startswith("mcp:") and not tool.startswith(MCP_PREFIX):
        # A server that is down is one row, "*": its tools would be named so.
        tool = f"{MCP_PREFIX}{row.source.removeprefix('mcp:')}__{tool}"
    when = when_tool_waits(
        settings.approvals, agent=agent, tool=tool, sandbox_network=settings.sandbox.network
    )
    return row.model_copy(update={"approval": when})
