"""Free-text replies as a small model's call plan keeps them: no loop, no echo, no dangling end.

A small model repeats itself in two ways. Within a reply, a sentence comes back again and
again; across turns, it copies its own earlier reply from the dialog ("Ava, I'm so glad you're
enjoying your adventure!" as the answer to every question). Both are cut: the guard is seeded
with the sentences of the agent's last few replies in the prompt, so a sentence said before is
never shown again. A reply with nothing left after the cut (or empty to begin with: a small
model sometimes ends its turn at once) is asked for once more, sampled hotter and with a
presence penalty; if that one echoes too, its own loops are cut and it is kept (saying
something twice beats not answering at all).
"""

from __future__ import annotations

import logging

from activities.gateway.base import DeltaCallback, Provider
from activities.gateway.repetition import RepetitionGuard, last_full_sentence, sentence_keys
from schemas.models import CallPlan, ModelBinding, ModelRequest, ModelResponse, TokenUsage

log = logging.getLogger(__name__)

REPETITION_CUT = "repetition"
"""The finish reason of a reply cut where a sentence repeated."""
EARLIER_REPLIES = 3
"""How many of the agent's last replies in the prompt a new one must not echo."""


def _earlier(request: ModelRequest) -> set[str]:
    said = [m.content for m in request.messages if m.role == "assistant" and m.content]
    return sentence_keys(said[-EARLIER_REPLIES:])


def _hotter(request: ModelRequest) -> ModelRequest:
    sampling = request.sampling
    if sampling is None:
        return request
    temperature = min((request.temperature or sampling.temperature or 0.7) + 0.3, 1.2)
    hotter = sampling.model_copy(
        update={"temperature": temperature, "presence_penalty": 1.0, "frequency_penalty": 0.8}
    )
    return request.model_copy(update={"sampling": hotter, "temperature": None})


class _Shown:
    """The stream's sink behind a guard: only text the guard lets through reaches it."""

    def __init__(self, sink: DeltaCallback | None, guard: RepetitionGuard) -> None:
        self.sink = sink
        self.guard = guard

    async def __call__(self, text: str) -> None:
        shown = self.guard.feed(text)
        if shown and self.sink is not None:
            await self.sink(shown)

    async def finish(self) -> None:
        rest = self.guard.finish()
        if rest and self.sink is not None:
            await self.sink(rest)


def _kept(response: ModelResponse, guard: RepetitionGuard, plan: CallPlan) -> ModelResponse:
    text, finish = guard.cut(), response.finish_reason
    if text != response.text:
        log.info("a repeated sentence was cut from a %s reply", response.model)
        finish = REPETITION_CUT
    if plan.end_on_sentence and finish == "length":
        text = last_full_sentence(text)
    if text == response.text:
        return response
    return response.model_copy(update={"text": text, "finish_reason": finish})


def _plus(first: TokenUsage, second: TokenUsage) -> TokenUsage:
    return TokenUsage(
        input_tokens=first.input_tokens + second.input_tokens,
        output_tokens=first.output_tokens + second.output_tokens,
        cached_read_tokens=first.cached_read_tokens + second.cached_read_tokens,
        cached_write_tokens=first.cached_write_tokens + second.cached_write_tokens,
    )


async def free_text(
    provider: Provider,
    request: ModelRequest,
    binding: ModelBinding,
    plan: CallPlan,
    sink: DeltaCallback | None,
) -> ModelResponse:
    """One free-text exchange, kept and streamed as ``plan`` says.

    Raises:
        ProviderError: A classified failure of either attempt.
    """
    if not plan.cut_repetition:
        response = await provider.complete(request, binding, on_delta=sink)
        if plan.end_on_sentence and response.finish_reason == "length":
            response = response.model_copy(update={"text": last_full_sentence(response.text)})
        return response
    earlier = _earlier(request)
    shown = _Shown(sink, RepetitionGuard(seen=set(earlier)))
    first = await provider.complete(request, binding, on_delta=shown)
    await shown.finish()
    kept = _kept(first, shown.guard, plan)
    if kept.text.strip():
        return kept
    log.info("a %s reply was empty or only echoed earlier ones; asking once more", first.model)
    again = _Shown(sink, RepetitionGuard(seen=set(earlier)))
    second = await provider.complete(_hotter(request), binding, on_delta=again)
    await again.finish()
    kept = _kept(second, again.guard, plan)
    if not kept.text.strip():
        # Echoed twice: keep the second reply with only its own loops cut.
        own = RepetitionGuard()
        text = own.feed(second.text) + own.finish()
        if sink is not None and text:
            await sink(text)
        kept = _kept(second, own, plan)
    return kept.model_copy(update={"usage": _plus(first.usage, second.usage)})
