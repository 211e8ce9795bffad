"""Loading the rules file: YAML in, a validated ``GuardrailRuleSet`` out, or every problem.

A broken file never loads halfway: :class:`RulesError` lists each problem with the line it is
on (taken from the YAML node marks, so an error deep in a rule points at that rule's line),
and the operator fixes them all in one pass. Without a configured file the shipped default set
(``default_rules.yaml`` beside this module) applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from schemas.guardrails import GuardrailRuleSet, GuardrailSettings

DEFAULT_RULES = Path(__file__).with_name("default_rules.yaml")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a rules file."""

    line: int | None
    message: str


class RulesError(ValueError):
    """A rules file that cannot load; ``problems`` holds each reason with its line."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        """One ``file:line: reason`` line per problem."""
        return [
            f"{self.source}:{p.line}: {p.message}" if p.line else f"{self.source}: {p.message}"
            for p in self.problems
        ]


def _node_at(root: yaml.Node | None, loc: tuple[int | str, ...]) -> yaml.Node | None:
    """The deepest YAML node along a pydantic error location."""
    node = root
    for part in loc:
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            child = node.value[part] if 0 <= part < len(node.value) else None
        # No child: a missing field, or a tag pydantic adds (a union's kind); stay on the parent.
        if child is not None:
            node = child
    return node


def _describe(error: Any) -> str:
    loc = ".".join(str(p) for p in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{loc}: {message}" if loc else message


def parse_rules(text: str, *, source: str = "<rules>") -> GuardrailRuleSet:
    """Validate a rules file's text.

    Args:
        text: The YAML.
        source: The file's name, for the messages.

    Raises:
        RulesError: The YAML is malformed or a rule is invalid; every problem with its line.
    """
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        raise RulesError(source, [Problem(line, f"not valid YAML: {err.problem}")]) from None
    except yaml.YAMLError as err:
        raise RulesError(source, [Problem(None, f"not valid YAML: {err}")]) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise RulesError(source, [Problem(1, "expected a mapping with 'version' and 'rules'")])
    try:
        return GuardrailRuleSet.model_validate(data)
    except ValidationError as err:
        problems = []
        for error in err.errors():
            node = _node_at(root, tuple(error["loc"]))
            line = node.start_mark.line + 1 if node is not None else None
            problems.append(Problem(line, _describe(error)))
        raise RulesError(source, problems) from None


def load_rules(path: Path | None) -> GuardrailRuleSet:
    """The rule set at ``path``, or the shipped defaults when ``path`` is ``None``.

    Raises:
        RulesError: The file is missing, unreadable or invalid.
    """
    target = path or DEFAULT_RULES
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as err:
        raise RulesError(str(target), [Problem(None, f"cannot read it: {err.strerror}")]) from None
    return parse_rules(text, source=str(target))


def configured_rules(settings: GuardrailSettings) -> GuardrailRuleSet:
    """The rule set the settings name (empty when guardrails are off)."""
    if not settings.enabled:
        return GuardrailRuleSet()
    return load_rules(settings.rules_path)


@lru_cache(maxsize=1)
def default_rules() -> GuardrailRuleSet:
    """The shipped default rule set (parsed once)."""
    return load_rules(None)
