"""The rules file: the shipped defaults load, a broken file refuses with line and reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from activities.guardrails.rules import (
    DEFAULT_RULES,
    RulesError,
    default_rules,
    load_rules,
    parse_rules,
)
from cli.main import app
from schemas.guardrails import GuardrailAction, GuardrailRuleSet

BROKEN = """\
version: 1
rules:
  - id: fine-rule
    pattern: {kind: prompt_injection}
    actions: [notify]
  - id: too-eager
    pattern:
      kind: message_burst
      messages: 1
    actions: [notify]
  - id: background-block
    pattern: {kind: sensitive_data}
    actions: [block]
  - id: bad-regex
    pattern:
      kind: prohibited_requests
      phrases: ['(unclosed']
    actions: [notify]
"""


def test_the_default_rules_cover_every_pattern_and_action() -> None:
    rules = default_rules()
    assert {r.pattern.kind for r in rules.rules} == {
        "escalating_conflict",
        "prohibited_requests",
        "message_burst",
        "prompt_injection",
        "sensitive_data",
    }
    assert [r.id for r in rules.active(blocking=True)] == ["secrets-in-reply"]
    actions = {a for r in rules.rules for a in r.actions}
    assert {GuardrailAction.NOTIFY, GuardrailAction.BLOCK, GuardrailAction.COOLDOWN} <= actions


def test_a_broken_file_names_each_problem_with_its_line() -> None:
    with pytest.raises(RulesError) as caught:
        parse_rules(BROKEN, source="rules.yaml")
    lines = caught.value.lines()
    assert any(
        line.startswith("rules.yaml:9: rules.1.pattern.message_burst.messages:")
        and "greater than or equal to 2" in line
        for line in lines
    ), lines
    assert any(
        line.startswith("rules.yaml:11: rules.2:") and "needs 'blocking: true'" in line
        for line in lines
    ), lines
    assert any(
        line.startswith("rules.yaml:17: rules.3.pattern.prohibited_requests.phrases:")
        and "'(unclosed' is not a regular expression" in line
        for line in lines
    ), lines
    assert len(lines) == 3


def test_malformed_yaml_names_the_line() -> None:
    with pytest.raises(RulesError) as caught:
        parse_rules("version: 1\nrules:\n  - id: x\n    actions: [notify\n", source="r.yaml")
    (line,) = caught.value.lines()
    assert line.startswith("r.yaml:") and "not valid YAML" in line


def test_a_missing_file_and_a_duplicate_id_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="cannot read it"):
        load_rules(tmp_path / "absent.yaml")
    twice = (
        "rules:\n" + "  - {id: same, pattern: {kind: prompt_injection}, actions: [notify]}\n" * 2
    )
    with pytest.raises(RulesError, match="rule id 'same' is used twice"):
        parse_rules(twice)


def test_the_rules_file_has_a_json_schema() -> None:
    schema = GuardrailRuleSet.model_json_schema()
    assert schema["additionalProperties"] is False
    assert "rules" in schema["properties"]


def test_check_prints_one_line_per_problem_and_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "rules.yaml"
    broken.write_text(BROKEN, encoding="utf-8")
    result = CliRunner().invoke(app, ["guardrails", "check", str(broken)])
    assert result.exit_code == 2
    problems = [line for line in result.output.splitlines() if line.startswith(str(broken))]
    assert len(problems) == 3

    good = tmp_path / "good.yaml"
    good.write_text(DEFAULT_RULES.read_text(), encoding="utf-8")
    result = CliRunner().invoke(app, ["guardrails", "check", str(good)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith(": ok")


def test_list_shows_the_rules_in_force(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    custom = tmp_path / "mine.yaml"
    custom.write_text(
        "rules:\n  - {id: only-one, pattern: {kind: prompt_injection}, actions: [notify]}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PERSYN_GUARDRAILS__RULES_PATH", str(custom))
    from schemas.settings import get_settings

    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(app, ["guardrails", "list", "--json"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    (rule,) = [json.loads(line) for line in result.output.splitlines()]
    assert rule["id"] == "only-one"


def test_a_worker_refuses_a_broken_configured_file(tmp_path: Path) -> None:
    from activities.guardrails.wiring import build_guardrails
    from schemas.guardrails import GuardrailSettings

    broken = tmp_path / "rules.yaml"
    broken.write_text(BROKEN, encoding="utf-8")
    with pytest.raises(RulesError) as caught:
        build_guardrails(None, GuardrailSettings(rules_path=broken))  # type: ignore[arg-type]
    assert len(caught.value.problems) == 3
    # Switched off, nothing is read: no rules, and the cooldown check alone.
    off = build_guardrails(None, GuardrailSettings(enabled=False, rules_path=broken))  # type: ignore[arg-type]
    assert [check.name for check in off.checks] == ["cooldown"]


def test_list_refuses_a_broken_configured_file_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = tmp_path / "rules.yaml"
    broken.write_text(BROKEN, encoding="utf-8")
    monkeypatch.setenv("PERSYN_GUARDRAILS__RULES_PATH", str(broken))
    from schemas.settings import get_settings

    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(app, ["guardrails", "list"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {broken}:9: ")
