"""Every model-call activity has a bounded number of attempts.

A worker that disappears mid-call (a native crash took its process) must cost one attempt, not
start a crash loop: each activity call in ``workflows/`` whose activity class holds the model
gateway runs under a retry policy with a maximum number of attempts and a heartbeat timeout,
and never retries what cannot succeed. The calls are found in the source, so a new one is
checked without anyone remembering to list it. (A database step of the same class, such as
storing the formed memory, is not a model call and keeps the database's policy.)
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.common import RetryPolicy

from activities.gateway.gateway import ModelGateway
from contract.provider_errors import NON_RETRYABLE

WORKFLOWS = Path(__file__).resolve().parents[2] / "workflows"
MAX_ATTEMPTS = 5
_SELF_CALL = re.compile(r"self\.(_?\w+)\(")
_STARTS = {"execute_activity_method", "start_activity_method", "execute_activity", "start_activity"}


@dataclass(frozen=True)
class ModelCall:
    where: str
    activity: str
    options: dict[str, Any]


def _holds_gateway(cls: Any) -> bool:
    try:
        hints = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.annotation in (ModelGateway, "ModelGateway") for p in hints)


def _uses_gateway(cls: Any, method: str, depth: int = 3) -> bool:
    """Whether ``cls.method`` reaches ``self._gateway``, itself or through its own helpers."""
    function = getattr(cls, method, None)
    if function is None or depth == 0:
        return False
    source = inspect.getsource(function)
    if "self._gateway" in source:
        return True
    helpers = {n for n in _SELF_CALL.findall(source) if n != method}
    return any(_uses_gateway(cls, helper, depth - 1) for helper in helpers)


def _options(module: Any, call: ast.Call) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for keyword in call.keywords:
        spread = keyword.value
        # ``**summarized(MODEL_CALL, "...")``: the named policy plus the call's summary.
        if isinstance(spread, ast.Call) and spread.args:
            spread = spread.args[0]
        if keyword.arg is None and isinstance(spread, ast.Name):
            options.update(getattr(module, spread.id))
        elif keyword.arg in ("retry_policy", "heartbeat_timeout", "start_to_close_timeout"):
            options[keyword.arg] = eval(  # a module-level name or constructor: read, not run
                compile(ast.Expression(keyword.value), "<options>", "eval"), vars(module)
            )
    return options


def model_calls() -> list[ModelCall]:
    found: list[ModelCall] = []
    for path in sorted(WORKFLOWS.rglob("*.py")):
        name = ".".join(path.relative_to(WORKFLOWS.parent).with_suffix("").parts)
        module = importlib.import_module(name)
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in _STARTS or not node.args:
                continue
            target = node.args[0]
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            cls = getattr(module, target.value.id, None)
            if cls is None or not _holds_gateway(cls) or not _uses_gateway(cls, target.attr):
                continue
            found.append(
                ModelCall(
                    where=f"{path.name}:{node.lineno}",
                    activity=f"{target.value.id}.{target.attr}",
                    options=_options(module, node),
                )
            )
    return found


CALLS = model_calls()


def test_the_scan_finds_every_stage_that_calls_a_model() -> None:
    activities = {call.activity for call in CALLS}

    assert {
        "GenerationActivities.generate",
        "AssessActivities.self_assess",
        "JudgeActivities.judge",
        "CritiqueActivities.critique",
        "RefineActivities.refine",
        "ConsolidationActivities.summarize",
        "ConsolidationActivities.rate",
        "ConsolidationActivities.classify",
    } <= activities


@pytest.mark.parametrize("call", CALLS, ids=[f"{c.activity}@{c.where}" for c in CALLS])
def test_each_model_call_has_bounded_attempts_and_a_heartbeat(call: ModelCall) -> None:
    policy = call.options.get("retry_policy")

    assert isinstance(policy, RetryPolicy), f"{call.where}: no retry policy (unbounded default)"
    assert 1 <= policy.maximum_attempts <= MAX_ATTEMPTS
    assert set(NON_RETRYABLE) <= set(policy.non_retryable_error_types or [])
    heartbeat = call.options.get("heartbeat_timeout")
    assert isinstance(heartbeat, timedelta) and heartbeat <= timedelta(seconds=30), (
        f"{call.where}: a dead worker would hold the call until its start-to-close timeout"
    )
