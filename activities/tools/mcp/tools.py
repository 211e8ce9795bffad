"""A tool server's tool as a registry :class:`Tool`, namespaced ``mcp__{server}__{tool}``."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, ClassVar

import mcp_types
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict

from activities.tools.mcp.connection import ServerConnection, ServerUnavailableError
from activities.tools.mcp.descriptions import MAX_OFFERED, Described, describe
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.models import ToolSpec

PREFIX = "mcp__"
MAX_NAME = 64
"""Anthropic and OpenAI both cap tool names at 64 characters of ``[a-zA-Z0-9_-]``."""
MAX_DESCRIPTION = MAX_OFFERED
MAX_BUDGET_SECONDS = 540.0
"""Below the tool activity's 10-minute start-to-close timeout, so the tool's own limit ends it."""
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """The registry name of ``tool`` on ``server``: provider-safe, at most 64 characters.

    A name that had to be cut keeps a short hash of the original, so two long names that
    share a beginning stay apart.
    """
    name = f"{PREFIX}{server}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(tool.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


class McpArguments(ToolInput):
    """Whatever the model sent: the server checks it against its own input schema."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool):
    """Calls one tool on one server; subclassed per tool by :func:`mcp_tool`."""

    input_model = McpArguments
    remote_name: ClassVar[str]
    server: ClassVar[str]
    remote_schema: ClassVar[dict[str, Any]]
    remote_output_schema: ClassVar[dict[str, Any] | None]

    def __init__(self, connection: ServerConnection) -> None:
        self._connection = connection

    def spec(self) -> ToolSpec:
        """The server's own schemas (their words capped), so the model sees what it expects."""
        return ToolSpec(
            name=self.name,
            description=self.description,
            input_schema=self.remote_schema,
            output_schema=self.remote_output_schema,
        )

    async def run(self, call: ToolRun, args: Any) -> str:
        """Call the server; its error, or a connection that stayed broken, is a ToolError."""
        arguments = dict(args.model_extra or {}) if isinstance(args, McpArguments) else {}
        try:
            result = await self._connection.call(self.remote_name, arguments)
        except ServerUnavailableError as err:
            raise ToolError(str(err)) from None
        except MCPError as err:
            raise ToolError(f"the tool server refused the call: {err.message}") from None
        except TimeoutError:
            raise ToolError(f"the tool server {self.server!r} did not answer in time") from None
        text = render(result)
        if result.is_error:
            raise ToolError(text or "the tool failed and said nothing more")
        return text


def mcp_tool(
    connection: ServerConnection, remote: mcp_types.Tool, described: Described | None = None
) -> McpTool:
    """The registry tool for ``remote``, one of ``connection``'s server's tools.

    ``described`` is :func:`~activities.tools.mcp.descriptions.describe`'s view of it, when the
    caller already has it: the description fenced as the server's words, schemas capped.
    """
    server = connection.name
    described = described or describe(server, remote)
    settings = connection.settings
    # Room for every attempt: the registry's timeout wraps the retries, not one try.
    attempts = settings.call_retries + 1
    budget = attempts * settings.call_timeout_seconds + (attempts - 1) * (
        settings.connect_timeout_seconds
    )
    attributes: dict[str, Any] = {
        "name": tool_name(server, remote.name),
        "description": described.description,
        "remote_name": remote.name,
        "server": server,
        "remote_schema": described.input_schema,
        "remote_output_schema": described.output_schema,
        "timeout_seconds": min(budget, MAX_BUDGET_SECONDS),
    }
    cls = type(f"McpTool_{server}_{remote.name}", (McpTool,), attributes)
    tool: McpTool = cls(connection)
    return tool


def render(result: mcp_types.CallToolResult) -> str:
    """A call's result as text for the model: text blocks as they are, others described."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {len(block.data) * 3 // 4} bytes]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if text is not None else f"[resource {resource.uri}]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource link {block.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)
