"""An agent start or a run's state carries no field a worker older than it would refuse."""

from __future__ import annotations

import importlib
import json
import pkgutil

import pytest
from temporalio.contrib.pydantic import pydantic_data_converter

import schemas
from schemas.agents import AGENT_SHAPE, AgentWorkflowInput
from schemas.events import Evolving


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


def _evolving() -> list[type[Evolving]]:
    """Every wire model that leaves fields out: each schemas module imported, so none hides."""
    for module in pkgutil.iter_modules(schemas.__path__):
        importlib.import_module(f"schemas.{module.name}")
    found, todo = [], list(Evolving.__subclasses__())
    while todo:
        model = todo.pop()
        found.append(model)
        todo.extend(model.__subclasses__())
    return found


@pytest.mark.parametrize("model", _evolving(), ids=lambda m: m.__name__)
def test_each_field_left_out_unset_is_sent_only_when_set(model: type[Evolving]) -> None:
    assert model.LEFT_OUT_UNSET, model
    required = {"handle": "ada"} if "handle" in model.model_fields else {}
    for name in model.LEFT_OUT_UNSET:
        unset = model(**required)
        assert name not in json.loads(unset.model_dump_json())
        annotation = model.model_fields[name].annotation
        value = True if annotation is bool else 1
        sent = model(**required, **{name: value})
        assert json.loads(sent.model_dump_json())[name] == value
        assert model.model_validate_json(sent.model_dump_json()) == sent
