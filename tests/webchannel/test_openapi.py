"""The web channel's OpenAPI document is valid, complete, and true of the running service.

The document is checked against the OpenAPI 3.1 specification, then Schemathesis fuzzes the
service built from it (real Temporal, PostgreSQL and worker; a real token) with every one of
its default checks, on a bounded budget, and must find nothing.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate
from temporalio.client import Client

from schemas.channel_names import channel_name_pattern
from schemas.ids import HANDLE_PATTERN, ULID_PATTERN
from tests.harness import Harness, Stack, running_worker
from tests.webchannel.web import serving
from webchannel.app import create_app
from webchannel.tenancy import MAX_NAME_CHARS

MESSAGES = "/v1/agents/{handle}/messages"
MARKER = "/v1/agents/{handle}/markers/{event_id}"
STREAM = "/v1/agents/{handle}/channels/{channel}/stream"

FUZZ_BUDGET_S = 120
"""Schemathesis's time budget: its fuzzing phase repeats until this is spent."""


@pytest.fixture
def document(stack: Stack, tmp_path: Path) -> dict[str, Any]:
    openapi: dict[str, Any] = create_app(stack.settings(home=tmp_path)).openapi()
    return openapi


def test_the_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1.")
    validate(document)  # raises, naming the first problem
    # Every reference resolves inside the document (a body's own $defs would not).
    text = json.dumps(document)
    assert '"#/$defs/' not in text
    refs = {part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]}
    assert refs <= set(document["components"]["schemas"])


def test_the_body_and_every_path_parameter_carry_the_servers_rules(
    document: dict[str, Any],
) -> None:
    post = document["paths"][MESSAGES]["post"]
    body = post["requestBody"]["content"]["application/json"]["schema"]
    assert body["additionalProperties"] is False
    assert body["properties"]["speaker"]["properties"]["speaker_id"]["type"] == "string"
    # The one channel-name rule, within what the tenant prefix leaves a web channel's name.
    web_channel = channel_name_pattern(MAX_NAME_CHARS)
    assert body["properties"]["channel"]["pattern"] == web_channel
    assert body["properties"]["channel"]["maxLength"] == MAX_NAME_CHARS
    patterns = {
        (path, parameter["name"]): parameter["schema"].get("pattern")
        for path in (MESSAGES, MARKER, STREAM)
        for operation in document["paths"][path].values()
        for parameter in operation["parameters"]
        if parameter["in"] == "path"
    }
    assert patterns == {
        (MESSAGES, "handle"): HANDLE_PATTERN,
        (MARKER, "handle"): HANDLE_PATTERN,
        (MARKER, "event_id"): ULID_PATTERN,
        (STREAM, "handle"): HANDLE_PATTERN,
        (STREAM, "channel"): web_channel,
    }
    assert "503" in document["paths"][MARKER]["get"]["responses"]
    for path in (MESSAGES, MARKER, STREAM):
        for operation in document["paths"][path].values():
            refusal = operation["responses"]["422"]["content"]["application/json"]["schema"]
            assert refusal == {"$ref": "#/components/schemas/Problem"}


@pytest.fixture
async def worker(client: Client, stack: Stack) -> AsyncIterator[Harness]:
    async with running_worker(client, stack) as harness:
        yield harness


async def test_schemathesis_finds_nothing(
    client: Client, stack: Stack, worker: Harness, tmp_path: Path
) -> None:
    agent = await worker.create_agent()
    settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
    # Every operation talks to the real agent, so valid requests reach the use cases. With the
    # handle fixed, a stateful step (its other parameters taken from an earlier response) may
    # have nothing left to make invalid, and Schemathesis then reports the valid request it
    # sent as an accepted violation ("Invalid component: positive test case"): the stateful
    # phase skips negative_data_rejection (the coverage and fuzzing phases run it). The
    # stream operation reads each event stream for its request timeout: keep that short.
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        f"""\
[parameters]
"path.handle" = "{agent.handle}"

[phases.stateful.generation]
mode = "positive"

[phases.stateful.checks.negative_data_rejection]
enabled = false

[[operations]]
include-path-regex = "/stream$"
request-timeout = 3

# No tool call waits for approval while it fuzzes, so every decision is a 404 by design: the
# "missing test data" warning is off for that operation alone.
[[operations]]
include-path-regex = "/approvals/"
warnings = false

# An upload must be a picture or a recording by its bytes, which no schema can say: random
# bytes valid for "format: binary" are rightly refused (422), so that check cannot hold there.
[[operations]]
include-path-regex = "/media$"
checks.positive_data_acceptance.enabled = false

# A call's identifier comes from a header or from one of three body fields, which no schema
# can require together: a body valid by the schema but naming no call is rightly refused (422),
# so most generated bodies are, and Schemathesis's "validation mismatch" warning says so.
[[operations]]
include-path-regex = "/voice/"
checks.positive_data_acceptance.enabled = false
warnings = false
"""
    )
    async with serving(settings, client, messages_per_minute=0) as web:
        schemathesis = Path(sys.executable).parent / "schemathesis"
        process = await asyncio.create_subprocess_exec(
            str(schemathesis),
            "--config-file",
            str(config),
            "run",
            f"{web.base_url}/openapi.json",
            "--header",
            f"Authorization: Bearer {web.token}",
            "--max-examples",
            "30",
            "--request-timeout",
            "5",
            "--max-time",
            str(FUZZ_BUDGET_S),
            # One worker: Hypothesis parses lambdas' source with ast.parse, which CPython 3.11
            # does not make safe across threads ("AST constructor recursion depth mismatch").
            "--workers",
            "1",
            "--seed",
            "27",
            "--no-color",
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(process.communicate(), FUZZ_BUDGET_S + 120)
    report = out.decode(errors="replace")
    assert process.returncode == 0, report
    assert "No issues found" in report, report
