"""Context assembly: every source fetched concurrently, fitted to the model's budget, stored.

The system instruction is one message: stable blocks first (persona, standing constraints,
skills), then volatile ones (retrieved memories, goals, quick facts, parked deliberation, ...),
with what changes every turn last (what was done at the person's request, the date/time line),
so a provider, or the local model server's prompt cache, reuses the longest prefix. Dialog
becomes the chat messages. A plan with ``context_after_dialog`` (the local model's) goes
further: the volatile blocks become a system message just before the newest message, so the
instructions and the whole earlier dialog are the same prefix from one turn to the next. The
prompt goes to PostgreSQL; workflow history only ever sees its ID and shape.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Sequence

from activities.context.model import (
    ContextBlock,
    ContextRequest,
    ContextSource,
    PrimableSource,
    Trim,
)
from activities.gateway.registry import ModelRegistry
from activities.recent import PROMPTS
from schemas.activation import AssembleContextInput, ContextPart, PromptRef
from schemas.agents import AgentPublic
from schemas.ids import new_ulid
from schemas.models import ChatMessage
from schemas.text import estimate_tokens
from store.db import Database
from store.queries.agents import agent_on
from store.queries.runtime import save_prompt
from store.tables import PromptRow

log = logging.getLogger(__name__)

SAFETY_MARGIN = 0.05
"""Share of the window left unused: the chars/4 estimate is rough."""


class UnknownAgentError(LookupError):
    """The activation names an agent with no record."""


class ContextAssembler:
    """Builds and stores the prompt for one pipeline step."""

    def __init__(self, db: Database, registry: ModelRegistry, sources: Sequence[ContextSource]):
        self._db = db
        self._registry = registry
        self._sources = list(sources)
        self._primable = [s for s in self._sources if isinstance(s, PrimableSource)]

    @property
    def sources(self) -> list[ContextSource]:
        """The sources, in registration order."""
        return list(self._sources)

    def prime(self, *, agent: str, channel_key: str, query: str) -> None:
        """Let every source that can start its work on this input before it is assembled.

        Admission calls it first thing, so those reads run beside the turn's write instead of
        after it; an assembly that never comes leaves the work to be dropped unused.
        """
        for source in self._primable:
            source.prime(agent=agent, channel_key=channel_key, query=query)

    async def agent(self, handle: str) -> AgentPublic | None:
        """The agent a prompt is assembled for (``None`` if there is no such agent).

        Admission reads it beside the turn's write and hands it to :meth:`assemble`.
        """
        return await agent_on(self._db.lane, handle=handle)

    async def _fetch(
        self, request: ContextRequest, *, omit: Sequence[str] = ()
    ) -> list[ContextBlock]:
        """Every source's block; a source in ``omit`` only if the platform needs its extra."""
        sources = [
            source
            for source in self._sources
            if source.name not in omit or getattr(source, "extra_when_omitted", False)
        ]
        results = await asyncio.gather(
            *(source.fetch(request) for source in sources), return_exceptions=True
        )
        blocks: list[ContextBlock] = []
        for source, result in zip(sources, results, strict=True):
            if isinstance(result, BaseException):
                if source.required or not isinstance(result, Exception):
                    raise result
                # Optional enrichments fail soft: the reply goes out with less context.
                log.warning("context source %s failed", source.name, exc_info=result)
                continue
            if result is not None:
                blocks.append(result)
        return blocks

    async def assemble(
        self, data: AssembleContextInput, agent: AgentPublic | None = None
    ) -> PromptRef:
        """Assemble, fit and store the prompt for ``data`` (for ``agent``, when already read)."""
        agent = agent or await self.agent(data.agent)
        if agent is None:
            raise UnknownAgentError(f"no agent {data.agent!r}")
        binding = self._registry.binding(data.task)
        budget = int(binding.context_window * (1 - SAFETY_MARGIN)) - binding.max_output_tokens
        request = ContextRequest(input=data, agent=agent, binding=binding, budget_tokens=budget)
        plan = self._registry.plan(binding.provider)
        volatile_last = plan.context_after_dialog
        fetched = await self._fetch(request, omit=plan.omit_context)
        # What the plan's model is not shown may still leave its extra (what the platform says).
        hidden = [b for b in fetched if b.source in plan.omit_context]
        blocks = fit(
            [b for b in fetched if b.source not in plan.omit_context],
            budget=budget,
            window=binding.context_window,
            paged=volatile_last,
        )
        shown = [
            block
            for block in sorted(blocks, key=lambda b: (not b.stable, b.order))
            if block.messages is None and block.items
        ]
        system = "\n\n".join(block.render() for block in shown)
        messages = [m for block in blocks if block.messages is not None for m in block.messages]
        if volatile_last and messages:
            system, messages = after_dialog(shown, messages)
        prompt_id = new_ulid()
        tokens = estimate_tokens(system) + _tokens(messages)
        extra = {block.source: block.extra for block in [*blocks, *hidden] if block.extra}
        # One INSERT, atomic on its own: no transaction around it.
        await save_prompt(
            self._db.lane,
            prompt_id=prompt_id,
            activation_id=data.activation_id,
            task=data.task.value,
            system=system,
            messages=messages,
            token_estimate=tokens,
            created_at=data.now,
            extra=extra,
        )
        # The model call reads it back in a moment, usually in this worker (activities/recent.py).
        PROMPTS.keep(
            prompt_id,
            PromptRow(
                id=prompt_id,
                activation_id=data.activation_id,
                task=data.task.value,
                system=system,
                messages=[m.model_dump() for m in messages],
                # As PostgreSQL gives it back: JSON's own types (a tuple comes back a list).
                extra=json.loads(json.dumps(extra)),
                token_estimate=tokens,
                created_at=data.now,
            ),
        )
        return PromptRef(
            prompt_id=prompt_id,
            task=data.task,
            token_estimate=tokens,
            parts=[
                ContextPart(source=b.source, tokens=b.tokens(), items=len(b.items)) for b in blocks
            ],
        )


def after_dialog(
    shown: Sequence[ContextBlock], messages: list[ChatMessage]
) -> tuple[str, list[ChatMessage]]:
    """The stable blocks as the system instruction; the rest just before the newest message.

    What a turn changes (recalled memories, facts, the clock) then follows everything the
    last turn's prompt also held, so a server's prompt cache reads only what is new.
    """
    system = "\n\n".join(block.render() for block in shown if block.stable)
    volatile = "\n\n".join(block.render() for block in shown if not block.stable)
    if not volatile:
        return system, messages
    return system, [*messages[:-1], ChatMessage(role="system", content=volatile), messages[-1]]


PAGE = 4
"""On average one person's message in this many starts a page of a paged dialog."""


def page_start(message: ChatMessage, page: int = PAGE) -> bool:
    """Whether a paged dialog may start at ``message``: a fixed property of its words."""
    digest = hashlib.sha256(message.content.encode("utf-8", "surrogatepass")).digest()
    return message.role == "user" and digest[0] % page == 0


def _tokens(messages: Sequence[ChatMessage]) -> int:
    return sum(estimate_tokens(m.content) + 4 for m in messages)


def _paged(messages: list[ChatMessage], limit: int) -> list[ChatMessage]:
    """The dialog from the earliest page start it fits from, or all of it when it fits.

    Dropping the oldest turn one at a time changes the start of the dialog every turn once the
    window is full, and a server's prompt cache then reuses nothing after the instructions.
    Starting at a page, the start holds until the dialog no longer fits from there: a few
    turns at a time, it moves on to the next page start. Where a page start is is a property of
    the message alone, so every turn's assembly finds the same ones without keeping state.
    """
    if _tokens(messages) <= limit:
        return messages
    # Pages, then half pages where no page start fits (the starts fall where they fall).
    for page in (PAGE, PAGE // 2):
        for index in range(1, len(messages) - 1):
            if page_start(messages[index], page) and _tokens(messages[index:]) <= limit:
                return messages[index:]
    return messages


def _shrink_messages(
    messages: list[ChatMessage], limit: int, *, paged: bool = False
) -> list[ChatMessage]:
    kept = _paged(list(messages), limit) if paged else list(messages)
    while len(kept) > 1 and _tokens(kept) > limit:
        kept.pop(0)
        if kept and kept[0].role == "assistant":
            kept.pop(0)
    if kept and estimate_tokens(kept[-1].content) > limit:
        # A single oversized input: keep its start and end, mark the cut.
        keep_chars = max(limit * 4 // 2 - 40, 200)
        text = kept[-1].content
        kept[-1] = ChatMessage(
            role=kept[-1].role,
            content=f"{text[:keep_chars]}\n[... {len(text) - 2 * keep_chars} characters cut ...]\n"
            f"{text[-keep_chars:]}",
        )
    return kept


def fit(
    blocks: list[ContextBlock], *, budget: int, window: int, paged: bool = False
) -> list[ContextBlock]:
    """Shrink trimmable blocks so the whole prompt fits ``budget`` tokens.

    Untrimmable blocks are kept whole. Blocks with a ``share`` (retrieved memories) may take
    at most that fraction of the window and at most what the rest leaves. Dialog takes the
    remainder, dropping its oldest turns first but always keeping the input; ``paged``, it
    starts at a page start where it can (:func:`page_start`).
    """
    fixed = sum(b.tokens() for b in blocks if b.trim is Trim.NONE)
    remaining = budget - fixed
    dialog = [b for b in blocks if b.messages is not None]
    # Dialog's floor: the input itself must always fit.
    floor = sum(estimate_tokens(b.messages[-1].content) + 4 for b in dialog if b.messages)
    for block in sorted(
        (b for b in blocks if b.messages is None and b.trim is not Trim.NONE), key=lambda b: b.order
    ):
        cap = min(int((block.share or 1.0) * window), max(remaining - floor, 0))
        while block.items and block.tokens() > cap:
            block.items.pop(-1 if block.trim is Trim.LAST_FIRST else 0)
        remaining -= block.tokens()
    for block in dialog:
        assert block.messages is not None
        block.messages = _shrink_messages(block.messages, max(remaining, 64), paged=paged)
        remaining -= block.tokens()
    return blocks
