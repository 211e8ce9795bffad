"""Tool servers over MCP: which servers a worker connects to (``[mcp]`` in ``persyn.toml``).

Every server is off until the operator writes ``enabled = true`` for it: nothing is ever
auto-enabled. Secrets never sit in the file: a bearer token or a header value names the
environment variable that holds it, and the worker reads it when it connects.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SERVER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,23}$")
"""Short, so ``mcp__{server}__{tool}`` stays within the providers' 64-character tool names."""


class McpServerConfig(BaseModel):
    """One tool server: how to reach it and which of its tools the agent may call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Namespace of its tools: lower-case letters, digits, - and _.")
    enabled: bool = Field(default=False, description="Off unless the operator turns it on.")
    transport: Literal["stdio", "http"] = "stdio"
    command: str | None = Field(default=None, description="stdio: the program to start.")
    args: list[str] = Field(default_factory=list, description="stdio: its arguments.")
    env: dict[str, str] = Field(
        default_factory=dict, description="stdio: variables set for it (not secrets)."
    )
    env_from: list[str] = Field(
        default_factory=list,
        description="stdio: names of the worker's environment variables passed through to it.",
    )
    url: str | None = Field(default=None, description="http: the streamable HTTP endpoint.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="http: literal request headers (not secrets)."
    )
    headers_from_env: dict[str, str] = Field(
        default_factory=dict,
        description="http: header name -> environment variable holding its value.",
    )
    token_env: str | None = Field(
        default=None,
        description="http: environment variable holding a bearer token (Authorization header).",
    )
    allow: list[str] | None = Field(
        default=None,
        description="Tool names (or fnmatch patterns) to register; absent: every tool.",
    )
    deny: list[str] = Field(
        default_factory=list, description="Tool names (or patterns) never registered; wins."
    )
    allow_flagged_descriptions: bool = Field(
        default=False,
        description="Offer this server's tools even though the injection detector flagged what "
        "it says about them (its words are still capped and fenced as its own).",
    )

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not SERVER_NAME.match(value):
            raise ValueError(
                f"MCP server name {value!r}: use 1-24 lower-case letters, digits, '-' or '_'"
            )
        return value

    @model_validator(mode="after")
    def _check_transport(self) -> McpServerConfig:
        if self.transport == "stdio" and not self.command:
            raise ValueError(f"MCP server {self.name!r}: transport stdio needs a command")
        if self.transport == "http" and not (self.url or "").startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: transport http needs an http(s) url")
        return self

    def admits(self, tool: str) -> bool:
        """Whether the allow and deny lists let ``tool`` be registered (deny wins)."""
        if any(fnmatchcase(tool, pattern) for pattern in self.deny):
            return False
        return self.allow is None or any(fnmatchcase(tool, pattern) for pattern in self.allow)


class McpSettings(BaseModel):
    """Tool servers and how patiently the worker talks to them (``PERSYN_MCP__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    servers: list[McpServerConfig] = Field(
        default_factory=list,
        description="``[[mcp.servers]]`` entries, or ``[mcp.servers.NAME]`` tables.",
    )
    connect_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="How long the worker waits for a server at start (and on reconnecting) "
        "before it reports the server unavailable and serves without it.",
    )
    call_timeout_seconds: float = Field(
        default=30.0, gt=0, le=600, description="How long one tool call may take."
    )
    call_retries: int = Field(
        default=2,
        ge=0,
        le=5,
        description="Reconnect-and-retry attempts after a call fails on a broken connection.",
    )
    retry_initial_seconds: float = Field(
        default=1.0,
        gt=0,
        le=60,
        description="A server unavailable at worker start is tried again after this long, "
        "then after twice as long each time.",
    )
    retry_max_seconds: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description="The longest wait between background attempts to reach such a server.",
    )

    @field_validator("servers", mode="before")
    @classmethod
    def _servers_by_name(cls, value: Any) -> Any:
        # [mcp.servers.NAME] tables arrive as a dict: the key is the server's name.
        if isinstance(value, dict):
            return [{"name": name, **dict(body)} for name, body in value.items()]
        return value

    @model_validator(mode="after")
    def _unique_names(self) -> McpSettings:
        names = [server.name for server in self.servers]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"MCP server names must be unique: {', '.join(duplicates)}")
        return self

    def enabled(self) -> list[McpServerConfig]:
        """The servers the operator turned on."""
        return [server for server in self.servers if server.enabled]
