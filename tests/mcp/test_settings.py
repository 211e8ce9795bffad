"""Tool servers in persyn.toml: both table forms, off by default, bad entries named."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from activities.tools.mcp.tools import tool_name
from schemas.mcp import McpServerConfig, McpSettings
from schemas.settings import Settings

TOML = """
[mcp]
connect_timeout_seconds = 3

[mcp.servers.files]
command = "mcp-files"
args = ["--root", "/srv"]
enabled = true
deny = ["delete_*"]

[mcp.servers.search]
transport = "http"
url = "https://tools.example/mcp"
token_env = "SEARCH_TOKEN"
"""


def test_servers_come_from_persyn_toml_and_stay_off_unless_enabled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "persyn.toml").write_text(TOML)
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path))
    mcp = Settings().mcp
    assert mcp.connect_timeout_seconds == 3
    assert [(s.name, s.transport, s.enabled) for s in mcp.servers] == [
        ("files", "stdio", True),
        ("search", "http", False),
    ]
    assert [s.name for s in mcp.enabled()] == ["files"]
    assert not mcp.servers[0].admits("delete_file") and mcp.servers[0].admits("read_file")


def test_the_list_form_reads_the_same() -> None:
    mcp = McpSettings.model_validate(
        {"servers": [{"name": "files", "command": "mcp-files", "allow": ["read_*"]}]}
    )
    [server] = mcp.servers
    assert not server.enabled
    assert server.admits("read_file") and not server.admits("write_file")


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"name": "Bad Name!", "command": "x"}, "use 1-24 lower-case letters"),
        ({"name": "a"}, "transport stdio needs a command"),
        ({"name": "a", "transport": "http", "url": "ftp://x"}, r"needs an http\(s\) url"),
        ({"name": "a", "command": "x", "colour": "red"}, "colour"),
    ],
)
def test_a_bad_server_entry_is_refused_naming_what_to_fix(
    entry: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValidationError, match=problem):
        McpServerConfig.model_validate(entry)


def test_duplicate_server_names_are_refused() -> None:
    with pytest.raises(ValidationError, match="must be unique: a"):
        McpSettings.model_validate(
            {"servers": [{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]}
        )


def test_tool_names_fit_the_providers_limit_and_stay_apart() -> None:
    assert tool_name("demo", "get.weather") == "mcp__demo__get_weather"
    long_a, long_b = "x" * 80 + "a", "x" * 80 + "b"
    first, second = tool_name("demo", long_a), tool_name("demo", long_b)
    assert len(first) == len(second) == 64 and first != second
