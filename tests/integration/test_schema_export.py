"""The published wire contract: schema files, the index, and a round trip through real models."""

from __future__ import annotations

import json
import typing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from pydantic_settings import BaseSettings
from temporalio import workflow

from cli.schema import export_public, export_schemas
from contract import names
from contract.catalog import (
    HANDLERS,
    INDEX_FILE,
    JSON_SCHEMA_DIALECT,
    PUBLIC_MODELS,
    wire_models,
)
from schemas.events import (
    ChannelRef,
    CompletionMarker,
    InboundEvent,
    Outcome,
    Receipt,
    ReceiptStatus,
    Speaker,
    SubmitEventInput,
    Trigger,
)
from schemas.ids import new_ulid
from tests.integration import jsonschema_subset
from workers.build import WORKFLOWS
from workflows.handlers import original as typed_handler


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    directory = tmp_path_factory.mktemp("schemas") / "nested" / "out"
    return directory, export_schemas(directory)


def load(directory: Path, name: str) -> dict[str, Any]:
    document = json.loads((directory / name).read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def handler_names() -> set[str]:
    """Every handler name contract/names.py defines (its lower-case string constants)."""
    return {
        value
        for key, value in vars(names).items()
        if key.isupper()
        and isinstance(value, str)
        and key != "TASK_QUEUE"
        and not key.endswith(("_PREFIX", "_WORKFLOW"))
    }


def sample_event() -> InboundEvent:
    return InboundEvent(
        event_id=new_ulid(),
        channel=ChannelRef(service="web", channel="support"),
        speaker=Speaker(speaker_id="u-17", display_name="Grace"),
        text="Is the report ready?",
        trigger=Trigger.MESSAGE,
        conversation_id=new_ulid(),
        sent_at=datetime(2026, 5, 1, 9, 30, tzinfo=UTC),
    )


def test_one_file_per_wire_model_and_an_index(exported: tuple[Path, list[Path]]) -> None:
    directory, written = exported
    models = wire_models()
    assert sorted(p.name for p in directory.iterdir()) == sorted(p.name for p in written)
    assert [p.name for p in written] == [*(f"{name}.json" for name in models), INDEX_FILE]
    for spec in HANDLERS:
        assert spec.input.__name__ in models
        assert spec.result is None or spec.result.__name__ in models
    assert not any(issubclass(model, BaseSettings) for model in models.values())
    assert "Wire" not in models
    for name in models:
        document = load(directory, f"{name}.json")
        assert document["$schema"] == JSON_SCHEMA_DIALECT
        assert document["title"] == name


def test_every_schema_is_well_formed(exported: tuple[Path, list[Path]]) -> None:
    directory, _ = exported
    for name in wire_models():
        jsonschema_subset.check_schema(load(directory, f"{name}.json"))
    # Nested models travel inside each file, so one file is enough to validate a payload.
    event = load(directory, "InboundEvent.json")
    assert {"ChannelRef", "Speaker", "Modality"} <= set(event["$defs"])
    # A client may send only one trigger; the schema says so rather than listing them all.
    assert event["properties"]["trigger"]["enum"] == ["message"]
    assert event["properties"]["channel"] == {"$ref": "#/$defs/ChannelRef"}


def test_well_formed_by_the_official_metaschema_where_available(
    exported: tuple[Path, list[Path]],
) -> None:
    official = pytest.importorskip("jsonschema")
    directory, _ = exported
    for name in wire_models():
        official.Draft202012Validator.check_schema(load(directory, f"{name}.json"))


def test_index_names_match_temporal_names(exported: tuple[Path, list[Path]]) -> None:
    directory, _ = exported
    index = load(directory, INDEX_FILE)
    assert {h["name"] for h in index["handlers"]} == handler_names()
    assert {w["type"] for w in index["workflows"]} == {
        value for key, value in vars(names).items() if key.endswith("_WORKFLOW")
    }
    assert [w["id"] for w in index["workflows"]] == [
        names.agent_workflow_id("{handle}"),
        names.conversation_workflow_id("{ulid}"),
        names.activation_workflow_id("{ulid}"),
        names.deliberation_workflow_id("{activation ulid}"),
        names.consolidation_workflow_id("{ulid}"),
        f"{names.maintenance_schedule_id('{handle}')}-{{firing time}}",
        f"{names.heartbeat_schedule_id('{handle}')}-{{firing time}}",
        f"{names.reminder_schedule_id('{ulid}')}-{{firing time}}",
        names.sandbox_task_workflow_id("{ulid}"),
        names.render_workflow_id("{ulid}"),
        names.observation_workflow_id("{ulid}"),
        names.residue_workflow_id("{ulid}"),
        names.folding_workflow_id("{handle}"),
        names.guardrail_workflow_id("{activation ulid}"),
        names.delivery_workflow_id("{outbox ulid}"),
        names.call_workflow_id("{call id}"),
    ]
    # Schedule IDs are not workflow IDs: a scheduled run's ID is its schedule's plus the time.
    assert [w["schedule"] for w in index["workflows"]][5:] == [
        "maintenance/{handle}",
        "heartbeat/{handle}",
        "reminder/{ulid}",
        *[None] * 8,
    ]
    assert [w["id"] for w in index["workflows"]][:3] == [
        "agent/{handle}",
        "conversation/{ulid}",
        "activation/{ulid}",
    ]
    assert index["task_queue"] == names.TASK_QUEUE
    assert [w["schedule"] for w in index["workflows"]][:5] == [None] * 5
    assert index["payload_encoding"] == "json/plain"
    assert index["search_attributes"] == {
        key.name: "KeywordList" if key in (names.GUARDRAILS, names.APPROVALS) else "Keyword"
        for key in names.SEARCH_ATTRIBUTES
    }
    referenced = {
        entry[field]
        for entry in [*index["workflows"], *index["handlers"]]
        for field in ("input", "result")
        if entry[field] is not None
    }
    for model in referenced:
        assert (directory / index["models"][model]["file"]).is_file(), model
    submit = next(h for h in index["handlers"] if h["name"] == names.SUBMIT)
    assert (submit["kind"], submit["input"], submit["result"], submit["caller"]) == (
        "update",
        "SubmitEventInput",
        "Receipt",
        "integrator",
    )


def test_index_matches_what_the_workers_register(exported: tuple[Path, list[Path]]) -> None:
    """The declarative table cannot drift from the workflow definitions."""
    directory, _ = exported
    index = load(directory, INDEX_FILE)
    declared = {
        (h["workflow"], h["kind"], h["name"]): (h["input"], h["result"]) for h in index["handlers"]
    }
    registered: dict[tuple[str, str, str], tuple[str | None, str | None]] = {}
    runs: dict[str, tuple[str | None, str | None]] = {}

    def models_of(fn: typing.Callable[..., Any]) -> tuple[str | None, str | None]:
        # Handlers take raw payloads; the typed function they validate for is behind them.
        hints = typing.get_type_hints(typed_handler(fn))
        result = hints.pop("return")
        (argument,) = hints.values()
        assert issubclass(argument, BaseModel)
        return argument.__name__, None if result is type(None) else result.__name__

    for cls in WORKFLOWS:
        definition = workflow._Definition.must_from_class(cls)
        assert definition.name is not None
        runs[definition.name] = models_of(definition.run_fn)
        for kind, handlers in (
            ("signal", definition.signals),
            ("query", definition.queries),
            ("update", definition.updates),
        ):
            for name, handler in handlers.items():
                assert name is not None, f"{definition.name} has a dynamic {kind} handler"
                registered[(definition.name, kind, name)] = models_of(handler.fn)
    assert declared == registered
    assert {w["type"]: (w["input"], w["result"]) for w in index["workflows"]} == runs


def test_an_inbound_event_round_trips_through_its_schema(
    exported: tuple[Path, list[Path]],
) -> None:
    directory, _ = exported
    schema = load(directory, "InboundEvent.json")
    event = sample_event()
    payload = event.model_dump(mode="json")

    assert jsonschema_subset.errors(payload, schema) == []
    assert InboundEvent.model_validate_json(json.dumps(payload)) == event

    # What the schema refuses, the workers refuse too, and both name the field.
    for field, value in (("conversation_id", "not-a-ulid"), ("event_id", "42"), ("colour", "red")):
        bad = {**payload, field: value}
        problems = jsonschema_subset.errors(bad, schema)
        assert problems and any(f"/{field}" in problem for problem in problems), problems
        with pytest.raises(ValidationError) as caught:
            InboundEvent.model_validate(bad)
        assert field in str(caught.value)


def test_a_receipt_as_the_workers_return_it_satisfies_its_schema(
    exported: tuple[Path, list[Path]],
) -> None:
    directory, _ = exported
    now = datetime.now(UTC)
    event_id = new_ulid()
    receipt = Receipt(
        event_id=event_id,
        agent="ada",
        status=ReceiptStatus.COMPLETED,
        marker=CompletionMarker(
            event_id=event_id,
            activation_id=new_ulid(),
            conversation_id=new_ulid(),
            outcome=Outcome.SPOKE,
            text="It is.",
            completed_at=now,
            expires_at=now + timedelta(hours=1),
        ),
    )
    assert (
        jsonschema_subset.errors(receipt.model_dump(mode="json"), load(directory, "Receipt.json"))
        == []
    )


def test_export_is_deterministic(exported: tuple[Path, list[Path]], tmp_path: Path) -> None:
    directory, written = exported
    again = export_schemas(tmp_path)
    assert [p.name for p in again] == [p.name for p in written]
    for first, second in zip(written, again, strict=True):
        assert first.read_bytes() == second.read_bytes(), first.name
    assert directory != tmp_path


def test_the_public_bundle_holds_only_what_an_integrator_needs(tmp_path: Path) -> None:
    written = export_public(tmp_path)
    index = load(tmp_path, INDEX_FILE)
    assert {p.name for p in written} == {f"{m.__name__}.json" for m in PUBLIC_MODELS} | {INDEX_FILE}
    assert {
        "InboundEvent",
        "SubmitEventInput",
        "Receipt",
        "CompletionMarker",
        "MarkerQuery",
        "MarkerAnswer",
        "AgentStatus",
        "AgentWorkflowInput",
    } <= {m.__name__ for m in PUBLIC_MODELS}
    assert {h["caller"] for h in index["handlers"]} == {"integrator"}
    assert {h["name"] for h in index["handlers"]} == {
        names.SUBMIT,
        names.DELIVER,
        names.MARKER,
        names.STATUS,
        names.WINDOW,
        names.PULL_OUTBOX,
        names.DECIDE_APPROVAL,
    }
    # The conversation is listed for its `window` query, the activation for its
    # `decide_approval` update, each without its start input.
    assert [w["type"] for w in index["workflows"]] == [
        "AgentWorkflow",
        "ConversationWorkflow",
        "ActivationWorkflow",
    ]
    assert index["workflows"][1]["input"] is None and index["workflows"][2]["input"] is None


def test_the_schema_carries_the_rules_the_workers_enforce(
    exported: tuple[Path, list[Path]],
) -> None:
    directory, _ = exported
    schema = load(directory, "SubmitEventInput.json")
    good = {"event": sample_event().model_dump(mode="json")}
    assert jsonschema_subset.errors(good, schema) == []
    breaking = {
        "/text": {"text": "x" * 32_001},
        "/text ": {"text": "bell\x07"},
        "/sent_at": {"sent_at": "2026-05-01T09:30:00"},
        "/trigger": {"trigger": "heartbeat"},
    }
    for where, change in breaking.items():
        bad = {"event": {**good["event"], **change}}
        problems = jsonschema_subset.errors(bad, schema)
        assert any(where.strip() in problem for problem in problems), (where, problems)
        # The workers refuse the same payload (the trigger at the handler, the rest here).
        if where != "/trigger":
            with pytest.raises(ValidationError):
                SubmitEventInput.model_validate(bad)
