"""The context-assembly activity."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.context.assembler import ContextAssembler, UnknownAgentError
from schemas.activation import AssembleContextInput, PromptRef


class ContextActivities:
    """Assembles prompts."""

    def __init__(self, assembler: ContextAssembler) -> None:
        self._assembler = assembler

    @activity.defn(name="context.assemble")
    async def assemble(self, data: AssembleContextInput) -> PromptRef:
        """Fetch every context source concurrently, fit the budget, store the prompt."""
        try:
            return await self._assembler.assemble(data)
        except UnknownAgentError as err:
            raise ApplicationError(str(err), type="UnknownAgent", non_retryable=True) from err
