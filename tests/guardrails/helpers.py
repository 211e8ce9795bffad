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
