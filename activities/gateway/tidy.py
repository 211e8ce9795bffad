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
from activities.gateway.repetition import (
    RepetitionGuard,
    cut_repetition,
    finished_length,
    last_full_sentence,
    sentence_keys,
)
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
    """The stream's sink behind a guard: only text the guard lets through reaches it.

    Near its token cap (``whole_after`` streamed pieces, about a token each) a reply that will
    be ended on its last full sentence streams only finished sentences: a fragment the cap
    cuts off was otherwise shown, then missing from the reply kept.
    """

    def __init__(
        self,
        sink: DeltaCallback | None,
        guard: RepetitionGuard | None,
        *,
        whole_after: int | None = None,
    ) -> None:
        self.sink = sink
        self.guard = guard
        self._whole_after = whole_after
        self._pieces = 0
        self._pending = ""
        self.sent = ""

    async def __call__(self, text: str) -> None:
        self._pieces += 1
        self._pending += self.guard.feed(text) if self.guard is not None else text
        out = self._pending
        if self._whole_after is not None and self._pieces >= self._whole_after:
            out = out[: finished_length(out)]
        await self._send(out)

    async def finish(self, kept: str) -> None:
        """The reply is over and ``kept`` is what stays: show what of it was held back."""
        if kept.startswith(self.sent.rstrip()) and len(kept) > len(self.sent):
            await self._send(kept[len(self.sent) :])

    async def _send(self, out: str) -> None:
        if not out:
            return
        self._pending = self._pending[len(out) :]
        self.sent += out
        if self.sink is not None:
            await self.sink(out)


WHOLE_SENTENCES_TOKENS = 32
"""In the last so many tokens before a reply's cap, only finished sentences are streamed."""


def _whole_after(request: ModelRequest, plan: CallPlan) -> int | None:
    cap = request.max_output_tokens
    if not plan.end_on_sentence or cap is None:
        return None
    return max(0, cap - WHOLE_SENTENCES_TOKENS)


def _kept(response: ModelResponse, said: set[str], plan: CallPlan) -> ModelResponse:
    """``response`` cut before a sentence repeated (of its own or in ``said``), as kept."""
    text, finish = cut_repetition(response.text, said), response.finish_reason
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
    whole_after = _whole_after(request, plan)
    if not plan.cut_repetition:
        plain = _Shown(sink, None, whole_after=whole_after)
        response = await provider.complete(request, binding, on_delta=plain)
        if plan.end_on_sentence and response.finish_reason == "length":
            response = response.model_copy(update={"text": last_full_sentence(response.text)})
        await plain.finish(response.text)
        return response
    earlier = _earlier(request)
    shown = _Shown(sink, RepetitionGuard(seen=set(earlier)), whole_after=whole_after)
    first = await provider.complete(request, binding, on_delta=shown)
    kept = _kept(first, earlier, plan)
    await shown.finish(kept.text)
    if kept.text.strip():
        return kept
    log.info("a %s reply was empty or only echoed earlier ones; asking once more", first.model)
    again = _Shown(sink, RepetitionGuard(seen=set(earlier)), whole_after=whole_after)
    second = await provider.complete(_hotter(request), binding, on_delta=again)
    kept = _kept(second, earlier, plan)
    await again.finish(kept.text)
    if not kept.text.strip():
        # Echoed twice: keep the second reply with only its own loops cut.
        kept = _kept(second, set(), plan)
        await again.finish(kept.text)
    return kept.model_copy(update={"usage": _plus(first.usage, second.usage)})
