"""A scripted provider for tests and benchmarks: replies and failures decided by rules, no model.

A script is a list of rules tried in order; the first whose conditions match the request
answers. A rule can reply with fixed text (``{last}`` is replaced by the last user message,
``{tool}`` by the last tool result), call tools, wait a fixed latency, fail with a classified
error a number of times, or count its uses so a test can assert how many calls were made.

Script file (``PERSYN_SCRIPTED_SCRIPT``), JSON::

    {"rules": [{"match": "weather", "reply": "Sunny."},
               {"match": "sum", "after_tool": false,
                "tool_calls": [{"name": "calculate", "arguments": {"expression": "2+2"}}]},
               {"after_tool": true, "reply": "The tool said {tool}"},
               {"fail": "rate_limit", "times": 2},
               {"reply": "You said: {last}"}]}

A tool call's ``arguments`` may be a string: it is sent as the model's raw (possibly
malformed) argument text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from activities.gateway.base import DeltaCallback, Provider
from contract.provider_errors import (
    ProviderAuthError,
    ProviderError,
    ProviderInvalidRequestError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderTimeoutError,
)
from schemas.models import (
    ModelBinding,
    ModelRequest,
    ModelResponse,
    ProviderName,
    TaskType,
    TokenUsage,
    ToolCall,
)
from schemas.text import estimate_tokens

FailureKind = Literal["rate_limit", "server", "timeout", "auth", "invalid"]

_FAILURES: dict[str, type[ProviderError]] = {
    "rate_limit": ProviderRateLimitError,
    "server": ProviderServerError,
    "timeout": ProviderTimeoutError,
    "auth": ProviderAuthError,
    "invalid": ProviderInvalidRequestError,
}


class ScriptToolCall(BaseModel):
    """A tool call a rule makes; string arguments are sent raw (malformed on purpose)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class ScriptRule(BaseModel):
    """One rule of a script."""

    model_config = ConfigDict(extra="forbid")

    match: str | None = Field(default=None, description="Regex searched in the last user message.")
    system_match: str | None = Field(default=None, description="Regex searched in the system text.")
    task: str | None = Field(default=None, description="Only for this task type.")
    after_tool: bool | None = Field(
        default=None,
        description="Only when the last message is (true) or is not (false) a tool result.",
    )
    tool_match: str | None = Field(
        default=None, description="Regex searched in the last tool result."
    )
    reply: str | None = None
    tool_calls: list[ScriptToolCall] = Field(default_factory=list)
    fail: FailureKind | None = None
    retry_after: float | None = None
    times: int | None = Field(default=None, ge=1, description="Applies this many times, then not.")
    delay_ms: float = Field(default=0.0, ge=0)
    rendezvous: int | None = Field(
        default=None,
        ge=2,
        description="Hold each call until this many are in progress at once (at most 30 s), "
        "so a test can prove calls overlap without measuring time.",
    )
    used: int = 0

    def applies(self, request: ModelRequest) -> bool:
        """Whether this rule answers ``request``."""
        if self.times is not None and self.used >= self.times:
            return False
        if self.task is not None and self.task != request.task.value:
            return False
        last = _last_user(request)
        if self.match is not None and not re.search(self.match, last, re.IGNORECASE):
            return False
        after_tool = bool(request.messages) and request.messages[-1].role == "tool"
        if self.after_tool is not None and self.after_tool != after_tool:
            return False
        if self.tool_match is not None and not re.search(
            self.tool_match, _last_tool(request), re.IGNORECASE
        ):
            return False
        return self.system_match is None or bool(
            re.search(self.system_match, request.system, re.IGNORECASE)
        )


class Script(BaseModel):
    """An ordered list of rules; with none matching, the reply echoes the last user message."""

    model_config = ConfigDict(extra="forbid")

    rules: list[ScriptRule] = Field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Script:
        """Read a script file."""
        return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))


def _last_user(request: ModelRequest) -> str:
    for message in reversed(request.messages):
        if message.role == "user":
            return message.content
    return ""


def _last_tool(request: ModelRequest) -> str:
    for message in reversed(request.messages):
        if message.role == "tool":
            return message.content
    return ""


def _calls(rule: ScriptRule, request: ModelRequest) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for index, call in enumerate(rule.tool_calls):
        call_id = f"call_{len(request.messages)}_{index}"
        if isinstance(call.arguments, str):
            calls.append(ToolCall.as_sent(call_id, call.name, None, call.arguments))
        else:
            calls.append(ToolCall.as_sent(call_id, call.name, call.arguments))
    return calls


class ScriptedProvider(Provider):
    """Answers from a :class:`Script`; records the requests it saw in ``requests``.

    ``peak`` is the most calls it ever served at once, so tests can see concurrency.

    Args:
        script: The rules it answers by.
        keep_requests: Keep only about this many of the latest requests (``None``: all). A
            worker serving a long run (a soak, a demo) would otherwise hold every prompt.
    """

    name = ProviderName.SCRIPTED.value

    def __init__(self, script: Script | None = None, *, keep_requests: int | None = None) -> None:
        self.script = script or Script()
        self.requests: list[ModelRequest] = []
        self._keep = keep_requests
        self.active = 0
        self._arrivals = asyncio.Condition()
        self.peak = 0

    async def complete(
        self,
        request: ModelRequest,
        binding: ModelBinding,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> ModelResponse:
        """Answer by the first applicable rule."""
        async with self._arrivals:
            self.active += 1
            self.peak = max(self.peak, self.active)
            self._arrivals.notify_all()
        try:
            return await self._answer(request, binding, on_delta)
        finally:
            self.active -= 1

    def last(self, task: TaskType) -> ModelRequest:
        """The latest request of ``task`` it saw.

        Background work (critique, formation) runs beside a reply, so the latest request of any
        kind may belong to it: a test reading the reply's prompt names the task.
        """
        return next(r for r in reversed(self.requests) if r.task is task)

    async def _rendezvous(self, count: int) -> None:
        async with self._arrivals:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrivals.wait_for(lambda: self.peak >= count), 30)

    async def _answer(
        self, request: ModelRequest, binding: ModelBinding, on_delta: DeltaCallback | None
    ) -> ModelResponse:
        started = time.perf_counter()
        self.requests.append(request)
        if self._keep is not None and len(self.requests) > 2 * self._keep:
            del self.requests[: -self._keep]  # trimmed in halves: amortised constant time
        rule = next((r for r in self.script.rules if r.applies(request)), None)
        if rule is not None:
            rule.used += 1
            if rule.rendezvous:
                await self._rendezvous(rule.rendezvous)
            if rule.delay_ms:
                await asyncio.sleep(rule.delay_ms / 1000)
            if rule.fail is not None:
                raise _FAILURES[rule.fail](
                    f"scripted {rule.fail} failure", retry_after=rule.retry_after
                )
        offered = request.tool_choice != "none"
        calls = _calls(rule, request) if rule is not None and offered else []
        default = "" if calls else "{last}"
        template = rule.reply if rule is not None and rule.reply is not None else default
        text = template.replace("{last}", _last_user(request))
        text = text.replace("{tool}", _last_tool(request))
        if on_delta is not None:
            for piece in re.findall(r"\S+\s*", text):
                await on_delta(piece)
        prompt_tokens = (
            estimate_tokens(request.system)
            + sum(estimate_tokens(m.content) for m in request.messages)
            + sum(estimate_tokens(json.dumps(t.input_schema)) for t in request.tools)
        )
        return ModelResponse(
            text=text,
            model=binding.model,
            provider=ProviderName.SCRIPTED,
            finish_reason="tool_calls" if calls else "stop",
            tool_calls=calls,
            usage=TokenUsage(input_tokens=prompt_tokens, output_tokens=estimate_tokens(text)),
            latency_ms=(time.perf_counter() - started) * 1000,
        )
