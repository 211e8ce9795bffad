"""A self-hosted encoding service behind the OpenAI embeddings API (``POST /v1/embeddings``).

Text embedding servers (text-embeddings-inference, vLLM, llama.cpp, Infinity, ...) speak this
API, so a fleet of agents can share one accelerator. It is local infrastructure, never a hosted
third party, and it may be down: every failure becomes :class:`EncoderUnavailableError` at once
(no retries here: the caller falls back to lexical search, or its activity retries).
"""

from __future__ import annotations

import math

import openai
from openai import AsyncOpenAI

from activities.memory.encoder import EncoderUnavailableError

TIMEOUT_SECONDS = 30.0
"""Longest wait for one batch; a slower service is treated as down."""

BATCH_SIZE = 64
"""Texts per request: servers cap the batch (text-embeddings-inference defaults to 32-512)."""


class ServiceEncoder:
    """Vectors from an OpenAI-compatible embeddings endpoint.

    Args:
        base_url: The service's API root, e.g. ``http://encoder:8080/v1``.
        model: Model name sent with every request; also recorded with every vector.
        dimensions: The size every returned vector must have (``embedding_dimensions``).
        api_key: Bearer token, if the service wants one.
        timeout: Seconds to wait for one request.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dimensions: int,
        api_key: str | None = None,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self.name = model
        self.dimensions = dimensions
        self._model = model
        self._client = AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "unused",  # the client insists on a key; local servers ignore it
            max_retries=0,
            timeout=timeout,
        )

    async def encode(self, texts: list[str]) -> list[list[float]]:
        """Encode ``texts``; vectors are re-normalised, whatever the service returns.

        Raises:
            EncoderUnavailableError: The service is unreachable, failed, or answered with
                vectors of the wrong size.
        """
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            vectors.extend(await self._batch(texts[start : start + BATCH_SIZE]))
        return vectors

    async def _batch(self, texts: list[str]) -> list[list[float]]:
        try:
            response = await self._client.embeddings.create(
                model=self._model, input=texts, encoding_format="float"
            )
        except openai.APIStatusError as err:
            raise EncoderUnavailableError(
                f"the encoding service answered HTTP {err.status_code}"
            ) from err
        except openai.OpenAIError as err:  # connection refused, timeout, malformed answer
            raise EncoderUnavailableError(
                f"the encoding service is unavailable ({type(err).__name__})"
            ) from err
        try:
            # The client does not validate answers: a broken service can send anything.
            data = sorted(response.data, key=lambda item: item.index)
            raw = [[float(x) for x in item.embedding] for item in data]
        except (AttributeError, TypeError, ValueError) as err:
            raise EncoderUnavailableError("the encoding service sent a malformed answer") from err
        if len(raw) != len(texts):
            raise EncoderUnavailableError(
                f"the encoding service returned {len(raw)} vectors for {len(texts)} texts"
            )
        vectors = []
        for vector in raw:
            if len(vector) != self.dimensions:
                raise EncoderUnavailableError(
                    f"the encoding service returned {len(vector)}-dimensional vectors but "
                    f"embedding_dimensions is {self.dimensions}: fix the setting, then run "
                    "`persyn memory reindex`"
                )
            norm = math.sqrt(sum(x * x for x in vector))
            if not math.isfinite(norm) or norm == 0.0:
                raise EncoderUnavailableError("the encoding service returned a zero vector")
            vectors.append([x / norm for x in vector])
        return vectors

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.close()
