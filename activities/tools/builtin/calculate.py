"""The ``calculate`` tool: exact arithmetic (see :mod:`.arithmetic`)."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from activities.tools.builtin.arithmetic import ExpressionError, decimal_text, evaluate
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun


class CalculateInput(ToolInput):
    """Input of ``calculate``."""

    expression: str = Field(
        max_length=1000,
        description="Arithmetic such as '(1/3 + 2^10) * 7 // 2'. Operators: + - * / // % ** ^; "
        "functions: abs, floor, ceil, round(x, places), sqrt, factorial, gcd, lcm, min, max.",
    )


class CalculateOutput(BaseModel):
    """The exact value, and a decimal reading of it."""

    value: str = Field(description="Exact: an integer or a reduced fraction p/q.")
    decimal: str = Field(description="Up to 50 significant digits.")
    integer: bool


class CalculateTool(Tool):
    """Exact arithmetic without ``eval``."""

    name = "calculate"
    description = (
        "Evaluate an arithmetic expression exactly (whole numbers and fractions, never "
        "floating point). Use it for any calculation whose answer matters."
    )
    input_model = CalculateInput
    output_model = CalculateOutput

    async def run(self, call: ToolRun, args: CalculateInput) -> CalculateOutput:
        """Evaluate on a thread: the limits bound the work, but it may take milliseconds."""
        try:
            value = await asyncio.to_thread(evaluate, args.expression)
        except ExpressionError as err:
            raise ToolError(str(err)) from None
        return CalculateOutput(
            value=str(value), decimal=decimal_text(value), integer=value.denominator == 1
        )
