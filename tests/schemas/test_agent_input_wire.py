"""A client's agent start carries no field a worker older than it would refuse."""

from __future__ import annotations

import json

from temporalio.contrib.pydantic import pydantic_data_converter

from schemas.agents import AGENT_SHAPE, AgentWorkflowInput


def _sent(value: AgentWorkflowInput) -> dict[str, object]:
    (payload,) = pydantic_data_converter.payload_converter.to_payloads([value])
    sent: dict[str, object] = json.loads(payload.data)
    return sent


def test_a_start_without_a_shape_sends_none() -> None:
    assert set(_sent(AgentWorkflowInput(handle="ada"))) == {
        "handle",
        "state",
        "continue_as_new_after",
        "history_limit",
    }


def test_a_continuing_run_sends_its_shape_and_it_reads_back() -> None:
    value = AgentWorkflowInput(handle="ada", shape=AGENT_SHAPE)
    assert _sent(value)["shape"] == AGENT_SHAPE
    assert AgentWorkflowInput.model_validate(_sent(value)) == value
