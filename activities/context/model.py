"""The context-source contract: each source contributes one block, fetched concurrently."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from activities.context.fencing import Provenance, fence, unlabelled
from schemas.activation import AssembleContextInput
from schemas.agents import AgentPublic
from schemas.models import ChatMessage, ModelBinding
from schemas.text import estimate_tokens


class Trim(StrEnum):
    """How the assembler may shrink a block to fit the budget."""

    NONE = "none"
    LAST_FIRST = "last_first"  # items are ranked best first; drop from the end
    OLDEST_FIRST = "oldest_first"  # items are chronological; drop from the start


@dataclass(frozen=True)
class ContextRequest:
    """What every source sees."""

    input: AssembleContextInput
    agent: AgentPublic
    binding: ModelBinding
    budget_tokens: int


@dataclass
class ContextBlock:
    """One source's contribution: a titled list of items for the system instruction.

    ``stable`` blocks (identity, standing constraints) precede volatile ones so providers can
    cache the prefix. Dialog arrives as ``messages`` instead of system text.

    The items are fenced (:mod:`activities.context.fencing`) and labelled with ``provenance``
    unless the block is an ``instruction``: text the operator or Persyn itself wrote for the
    agent (persona, standing constraints, the clock). A source that says nothing is fenced as
    unverified, so a new source cannot slip outside text in as instructions by omission. The
    title is Persyn's own framing and stays outside the fence.
    """

    source: str
    title: str | None = None
    items: list[str] = field(default_factory=list)
    stable: bool = False
    order: int = 50
    trim: Trim = Trim.NONE
    share: float | None = None
    """Most of the budget this block may take (fraction of the context window)."""
    messages: list[ChatMessage] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    instruction: bool = False
    """The items are instructions for the agent, written by the operator or Persyn: unfenced."""
    provenance: Provenance | None = None
    """Where the items came from (``None``: unverified, labelled with the source's name)."""

    def tokens(self) -> int:
        """Estimated tokens of the block as rendered."""
        if self.messages is not None:
            return sum(estimate_tokens(m.content) + 4 for m in self.messages)
        return estimate_tokens(self.render())

    def render(self) -> str:
        """The block as system-instruction text: the title, then the items (fenced if outside)."""
        body = "\n".join(self.items)
        if not self.instruction:
            body = fence(body, self.provenance or unlabelled(self.source))
        return f"{self.title}\n{body}" if self.title else body


class ContextSource(Protocol):
    """A context source. ``required`` sources fail the assembly; others fail soft."""

    name: str
    required: bool

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """Produce this source's block, or ``None`` when it has nothing to add."""
        ...


@runtime_checkable
class PrimableSource(ContextSource, Protocol):
    """A source that can start part of its work from the agent, channel and text alone."""

    def prime(self, *, agent: str, channel_key: str, query: str) -> None:
        """Start that work now, for a ``fetch`` of the same input soon after."""
        ...
