"""Tools from MCP tool servers (docs/tools.md, "Tool servers (MCP)").

:class:`ToolServers` connects the configured servers when the worker starts and hands their
tools to the registry; :func:`probe` says, for ``persyn tools list``, whether each server's
tools are available and why not.
"""

from activities.tools.mcp.servers import ServerStatus, ToolServers, probe

__all__ = ["ServerStatus", "ToolServers", "probe"]
