"""Guardrail test helpers: a worker with a rules file of the test's own, a webhook receiver."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from schemas.conversation import WindowAnswer, WindowQuery
from schemas.dialog import Role
from schemas.events import Receipt
from schemas.guardrails import GuardrailResult
from tests.harness import Harness, Stack, running_worker, unique, until


@asynccontextmanager
async def guarded_worker(
    client: Client,
    stack: Stack,
    *,
    rules_yaml: str | None = None,
    webhook: str | None = None,
    script: list[ScriptRule] | None = None,
) -> AsyncIterator[Harness]:
    """A worker whose guardrails are ``rules_yaml`` (default: the shipped set)."""
    guardrails: dict[str, object] = {}
    if rules_yaml is not None:
        path = stack.home / f"{unique('rules')}.yaml"
        path.write_text(rules_yaml, encoding="utf-8")
        guardrails["rules_path"] = path
    if webhook is not None:
        guardrails["webhook_url"] = webhook
    async with running_worker(
        client, stack, rules=script, settings_overrides={"guardrails": guardrails}
    ) as harness:
        yield harness


async def guardrail_result(harness: Harness, activation_id: str) -> GuardrailResult:
    """The background guardrail run of one activation, once it has finished."""
    handle = harness.client.get_workflow_handle(
        names.guardrail_workflow_id(activation_id), result_type=GuardrailResult
    )

    async def started() -> bool:
        try:
            await handle.describe()
        except Exception:
            return False
        return True

    await until(started, timeout=30)
    result: GuardrailResult = await handle.result()
    return result


async def screened_starts(harness: Harness, receipt: Receipt) -> list[str]:
    """The runs the exchange's conversation has started, once it has screened the exchange.

    The conversation takes the reply into its window and screens the exchange in the same
    workflow task, so once the window holds the reply the guardrail run's start, had there been
    one, is in the conversation's history.
    """
    marker = receipt.marker
    assert marker is not None and marker.activation_id and marker.conversation_id and marker.text
    conversation = harness.client.get_workflow_handle(
        names.conversation_workflow_id(marker.conversation_id)
    )

    async def screened() -> bool:
        answer = await conversation.query(names.WINDOW, WindowQuery(), result_type=WindowAnswer)
        return any(t.role is Role.AGENT and t.text == marker.text for t in answer.window)

    await until(screened, timeout=30)
    return [
        event.start_child_workflow_execution_initiated_event_attributes.workflow_id
        async for event in conversation.fetch_history_events()
        if event.HasField("start_child_workflow_execution_initiated_event_attributes")
    ]


async def no_guardrail_run(harness: Harness, receipt: Receipt) -> None:
    """The exchange was screened in its conversation and fired nothing: no run was started."""
    assert receipt.marker is not None and receipt.marker.activation_id
    started = await screened_starts(harness, receipt)
    assert names.guardrail_workflow_id(receipt.marker.activation_id) not in started, started


async def fired_on(harness: Harness, receipt: Receipt) -> list[str]:
    """The rules that fired on the exchange: none when no guardrail run was started for it."""
    assert receipt.marker is not None and receipt.marker.activation_id
    activation = receipt.marker.activation_id
    if names.guardrail_workflow_id(activation) not in await screened_starts(harness, receipt):
        return []
    return (await guardrail_result(harness, activation)).fired


@dataclass
class Webhook:
    """A local HTTP server standing in for a supervisor's endpoint."""

    url: str
    bodies: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 0
    fail_first: int = 0


@contextmanager
def webhook_server(*, fail_first: int = 0) -> Iterator[Webhook]:
    """Serve on a free port; the first ``fail_first`` POSTs get a 503, then 204s."""
    hook = Webhook(url="", fail_first=fail_first)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            hook.attempts += 1
            if hook.attempts <= hook.fail_first:
                self.send_response(503)
            else:
                hook.bodies.append(body)
                self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def rules_file(*rules: str) -> str:
    """A rules file holding ``rules`` (each a YAML list item, indented by two)."""
    return "version: 1\nrules:\n" + "".join(rules)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
