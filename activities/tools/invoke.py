"""The invoke activity: run one stored tool call and store its result.

No tool failure fails the activity: an unknown tool, arguments that are not a JSON object or do
not fit the input schema, a timeout, a :class:`ToolError` or any other exception all become an
error result the model reads on its next round. Only the database being away fails the
activity (and Temporal retries it). A retried call whose result is already stored returns it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from pydantic import BaseModel, ValidationError
from temporalio import activity

from activities.tools.registry import ToolError, ToolRegistry, ToolRun
from observability.tracing import tool_span
from schemas.autonomy import AutonomySettings
from schemas.events import first_unstorable
from schemas.tools import InvokeToolInput, ToolOutcome
from store.db import Database
from store.queries.tool_calls import finish_call, get_call
from store.tables.autonomy import ToolCallRow
from store.tables.columns import utcnow

log = logging.getLogger(__name__)


class ToolActivities:
    """Runs tool calls."""

    def __init__(self, db: Database, registry: ToolRegistry, settings: AutonomySettings) -> None:
        self._db = db
        self._registry = registry
        self._settings = settings

    @activity.defn(name="tools.invoke")
    async def invoke(self, data: InvokeToolInput) -> ToolOutcome:
        """Run the stored call ``data.call_id`` and store what came of it."""
        async with self._db.session() as session:
            row = await get_call(session, call_id=data.call_id)
        if row is None:
            return ToolOutcome(call_id=data.call_id, name="?", ok=False, error="no such call")
        if row.result is not None:  # a retry after the result was stored
            return _outcome(row.id, row.name, row.result, row.is_error)
        result, is_error = await self.run(row, data)
        async with self._db.session() as session:
            await finish_call(
                session, call_id=row.id, result=result, is_error=is_error, at=utcnow()
            )
        return _outcome(row.id, row.name, result, is_error)

    async def run(self, row: ToolCallRow, data: InvokeToolInput) -> tuple[str, bool]:
        """The call's result text and whether it is an error; never raises for the tool's sake."""
        with tool_span(row.name, row.arguments) as span:
            try:
                value = await self._run(row, data)
                text, is_error = _render(value), False
            except ToolError as err:
                text, is_error = _error(str(err)), True
            except TimeoutError:
                text, is_error = _error("the tool took too long and was stopped"), True
            except Exception as err:  # a bug in a tool must not take the turn down
                log.exception("tool %s failed", row.name)
                text, is_error = _error(f"the tool failed: {type(err).__name__}: {err}"), True
            span.set_result(text)
        limit = self._settings.tool_result_max_chars
        if len(text) > limit:
            text = text[:limit] + f"\n[... {len(text) - limit} characters cut]"
        return text, is_error

    async def _run(self, row: ToolCallRow, data: InvokeToolInput) -> Any:
        tool = self._registry.get(row.name)
        if tool is None:
            if self._registry.is_provider_tool(row.name):
                raise ToolError(f"{row.name} is run by the model provider, not by the platform")
            known = ", ".join(self._registry.names())
            raise ToolError(f"there is no tool named {row.name!r}; the tools are: {known}")
        if row.raw_arguments is not None:
            raise ToolError(_unparsed(row.raw_arguments))
        try:
            args = tool.input_model.model_validate(row.arguments)
        except ValidationError as err:
            raise ToolError(f"invalid arguments: {_problems(err)}") from None
        timeout = tool.timeout_seconds or self._settings.tool_timeout_seconds
        async with asyncio.timeout(timeout):
            return await tool.run(ToolRun(context=data.context, now=utcnow(), call_id=row.id), args)


def _unparsed(raw: str) -> str:
    """What was wrong with arguments kept unparsed (``ToolCall.as_sent``), in one line."""
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    found = first_unstorable(value, "") if isinstance(value, dict) else None
    if found is not None:
        return f"invalid arguments: {found[0] or 'text'} {found[1]}"
    return (
        f"the arguments were not a JSON object ({_snippet(raw)}): "
        "send an object matching the input schema"
    )


def _render(value: Any) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json(exclude_none=True)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


def _snippet(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _problems(err: ValidationError) -> str:
    parts = []
    for problem in err.errors()[:5]:
        where = ".".join(str(p) for p in problem.get("loc", ())) or "input"
        parts.append(f"{where}: {problem.get('msg', 'invalid')}")
    return "; ".join(parts)


def _outcome(call_id: str, name: str, result: str, is_error: bool) -> ToolOutcome:
    error = None
    if is_error:
        try:
            error = str(json.loads(result).get("error", result))[:300]
        except (ValueError, AttributeError):
            error = result[:300]
    return ToolOutcome(call_id=call_id, name=name, ok=not is_error, error=error)
