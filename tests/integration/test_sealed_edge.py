"""With the codec on (the product default), what Persyn answers an integrator is sealed: the
``temporal`` CLI reads it only through the codec endpoint, as docs/integration.md says."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

from contract import names
from schemas.ids import new_ulid
from temporal.codec import ENCODING
from tests.harness import Harness
from tests.integration.edge import Edge
from tests.integration.test_temporal_cli import event_json, running_agent, submit, temporal_cli

SECRET = "OSPREY-forty-two"


def payloads(node: object) -> Iterator[dict[str, object]]:
    """Every payload (an object with ``metadata`` and ``data``) in the CLI's JSON output."""
    if isinstance(node, dict):
        if "metadata" in node and "data" in node:
            yield node
        for value in node.values():
            yield from payloads(value)
    elif isinstance(node, list):
        for item in node:
            yield from payloads(item)


def encodings(node: object) -> set[str]:
    found = set()
    for payload in payloads(node):
        metadata = payload["metadata"]
        assert isinstance(metadata, dict)
        # errors="replace": a header (the internal signature) may carry binary metadata.
        found.add(base64.b64decode(str(metadata.get("encoding", ""))).decode(errors="replace"))
    return found


async def test_without_the_endpoint_results_and_history_are_sealed(
    harness: Harness, stack: Edge
) -> None:
    handle = await running_agent(harness)
    agent = names.agent_workflow_id(handle)
    event = event_json(f"remember {SECRET}")

    # Through the endpoint, as the guide says: plain JSON in, the receipt readable.
    receipt = (await submit(stack, handle, event)).json()["result"]
    assert receipt["marker"]["text"] == f"remember {SECRET}"

    # Without it, the same receipt (Temporal answers a repeated update ID from its first
    # result) is a sealed payload the CLI cannot print: no field of it, no trace of the text.
    plain_update = await temporal_cli(
        stack, "workflow", "update", "execute", "--workflow-id", agent, "--name", names.SUBMIT,
        "--update-id", event["event_id"], "--input", json.dumps({"event": event}), codec=False,
    )  # fmt: skip
    assert plain_update.returncode != 0
    assert SECRET not in plain_update.stdout + plain_update.stderr
    assert f"encoding {ENCODING.decode()}: payload encoding is not supported" in (
        plain_update.stderr
    )

    plain_query = await temporal_cli(
        stack, "workflow", "query", "--workflow-id", agent, "--name", names.MARKER,
        "--input", json.dumps({"event_id": event["event_id"]}), codec=False,
    )  # fmt: skip
    # A query prints the payload as Temporal holds it: ciphertext.
    assert SECRET not in plain_query.stdout + plain_query.stderr
    assert encodings(plain_query.json()) == {ENCODING.decode()}

    # The history: the agent's own payloads are sealed; the endpoint opens them.
    sealed = (await temporal_cli(stack, "workflow", "show", "-w", agent, codec=False)).json()
    opened = (await temporal_cli(stack, "workflow", "show", "-w", agent)).json()
    assert ENCODING.decode() in encodings(sealed) and SECRET not in json.dumps(sealed)
    assert ENCODING.decode() not in encodings(opened)
    texts = [base64.b64decode(str(p["data"])).decode(errors="replace") for p in payloads(opened)]
    assert any(SECRET in text for text in texts)


async def test_input_sent_through_the_endpoint_is_sealed_in_history(
    harness: Harness, stack: Edge
) -> None:
    handle = await running_agent(harness)
    agent = names.agent_workflow_id(handle)
    event = event_json(f"deliver {SECRET}", event_id=new_ulid())
    sent = await temporal_cli(
        stack, "workflow", "signal", "--workflow-id", agent, "--name", names.DELIVER,
        "--input", json.dumps({"event": event}),
    )  # fmt: skip
    assert sent.returncode == 0, sent.stderr

    history = (await temporal_cli(stack, "workflow", "show", "-w", agent, codec=False)).json()
    signalled = [e for e in history["events"] if e.get("workflowExecutionSignaledEventAttributes")]
    assert signalled and SECRET not in json.dumps(history)
    assert encodings(signalled) == {ENCODING.decode()}
