"""Encoders: the offline local model, the encoding service (against a fake server), none."""

from __future__ import annotations

import asyncio
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from activities.memory.encoder import EncoderUnavailableError
from activities.memory.encoders import EncoderConfigError, build_encoder
from activities.memory.encoders.local import (
    ATTENTION_CELLS,
    BATCH_SIZE,
    BATCH_TOKENS,
    MAX_TOKENS,
    LocalEncoder,
)
from activities.memory.encoders.null import NullEncoder
from activities.memory.encoders.service import ServiceEncoder
from schemas.ids import new_ulid
from schemas.settings import Settings
from temporal.devserver import free_port
from tests.memory.fake_embeddings import fake_service


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_local_vectors_are_unit_length_384d_and_deterministic(encoder: LocalEncoder) -> None:
    texts = ["I adopted a puppy last week.", "", "x" * 5000, "Über naïve café ☕"]
    first = await encoder.encode(texts)
    again = await encoder.encode(list(reversed(texts)))
    assert [len(v) for v in first] == [384] * 4
    for vector in first:
        assert math.isclose(math.sqrt(dot(vector, vector)), 1.0, abs_tol=1e-4)
    for a, b in zip(first, reversed(again), strict=True):
        assert dot(a, b) > 0.9999  # same text, same vector, whatever the batch around it


async def test_local_similar_texts_score_higher_than_unrelated(encoder: LocalEncoder) -> None:
    query, near, far = await encoder.encode(
        [
            "Where did Caroline go hiking?",
            "Caroline went on a hike in the mountains last weekend.",
            "The quarterly tax filing deadline is in April.",
        ]
    )
    assert dot(query, near) > dot(query, far) + 0.2


async def test_local_batches_stay_within_the_budgets_and_keep_their_order(
    encoder: LocalEncoder,
) -> None:
    # Long texts go a few at a time (the model's working memory grows with length squared),
    # short ones 32 at a time; every text keeps its own vector whichever batch it lands in.
    # The budgets hold on true token counts: IDs take a word piece for every two characters
    # or so, which no estimate from characters would plan for.
    ids = [" ".join(new_ulid() for _ in range(1 + n // 4)) for n in range(20)]
    texts = [("word " * (20 + 7 * n))[: 40 + 37 * n] for n in range(40)] + ["hi"] * 40 + ids
    model = encoder._loaded()
    lengths = [len(p) for p in model.tokenize(texts)]
    assert max(lengths) == MAX_TOKENS
    batches = encoder._batches(lengths)
    assert sorted(i for batch in batches for i in batch) == list(range(len(texts)))
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) == 1 or len(batch) * longest <= BATCH_TOKENS
        assert len(batch) == 1 or len(batch) * longest * longest <= ATTENTION_CELLS
        assert len(batch) <= BATCH_SIZE
    assert max(len(batch) for batch in batches) == BATCH_SIZE
    together = await encoder.encode(texts)
    alone = [(await encoder.encode([text]))[0] for text in texts[::9]]
    for a, b in zip(together[::9], alone, strict=True):
        assert dot(a, b) > 0.9999


async def test_one_text_does_not_wait_behind_a_batch_and_both_keep_their_vectors(
    encoder: LocalEncoder,
) -> None:
    # A search's question arrives while a conversation's turns are being encoded.
    batch = [f"turn {i}: " + "a long remembered sentence about the lake " * 12 for i in range(96)]
    alone = (await encoder.encode(["the question"]))[0]
    before = await encoder.encode(batch[:3])
    running = asyncio.ensure_future(encoder.encode(batch))
    asked = asyncio.ensure_future(encoder.encode(["the question"]))
    done, _ = await asyncio.wait({running, asked}, return_when=asyncio.FIRST_COMPLETED)

    assert asked in done and running not in done
    assert asked.result()[0] == pytest.approx(alone, abs=1e-5)
    assert (await running)[:3] == [pytest.approx(v, abs=1e-5) for v in before]


def test_the_local_encoder_takes_its_threads_from_settings() -> None:
    encoder = build_encoder(Settings(encoder="local", encoder_threads=2))
    assert isinstance(encoder, LocalEncoder) and encoder._threads == 2
    assert Settings().encoder_threads == 1


async def test_local_encodes_nothing_for_no_texts(encoder: LocalEncoder) -> None:
    assert await encoder.encode([]) == []


async def test_service_vectors_come_back_normalised_in_order_and_batched() -> None:
    with fake_service(dimensions=16) as service:
        encoder = ServiceEncoder(base_url=service.base_url, model="fake-embed", dimensions=16)
        try:
            texts = [f"text number {i} about cats" for i in range(70)] + ["dogs bark"]
            vectors = await encoder.encode(texts)
        finally:
            await encoder.aclose()
    assert len(vectors) == 71
    assert all(math.isclose(dot(v, v), 1.0, abs_tol=1e-9) for v in vectors)
    assert dot(vectors[0], vectors[1]) > dot(vectors[0], vectors[70])
    assert [len(r["input"]) for r in service.requests] == [64, 7]  # type: ignore[arg-type]
    assert {r["model"] for r in service.requests} == {"fake-embed"}


async def test_service_down_is_unavailable() -> None:
    encoder = ServiceEncoder(
        base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", dimensions=16, timeout=5
    )
    try:
        with pytest.raises(EncoderUnavailableError, match="unavailable"):
            await encoder.encode(["hello"])
    finally:
        await encoder.aclose()


@pytest.mark.parametrize(
    ("mode", "message"),
    [("error", "HTTP 500"), ("wrong-size", "17-dimensional"), ("garbage", "malformed")],
)
async def test_service_misbehaving_is_unavailable(mode: str, message: str) -> None:
    with fake_service(dimensions=16) as service:
        service.mode = mode
        encoder = ServiceEncoder(base_url=service.base_url, model="m", dimensions=16)
        try:
            with pytest.raises(EncoderUnavailableError, match=message):
                await encoder.encode(["hello"])
        finally:
            await encoder.aclose()
    assert len(service.requests) == 1  # no retries: the caller degrades at once


async def test_none_encoder_is_always_unavailable() -> None:
    with pytest.raises(EncoderUnavailableError, match="no encoder"):
        await NullEncoder().encode(["anything"])


def test_build_encoder_by_name() -> None:
    assert isinstance(build_encoder(Settings(encoder="local")), LocalEncoder)
    assert isinstance(build_encoder(Settings(encoder="none")), NullEncoder)
    service = build_encoder(
        Settings(
            encoder="openai-compatible",
            encoder_base_url="http://127.0.0.1:9/v1",
            encoder_model="bge-small",
            embedding_dimensions=384,
        )
    )
    assert isinstance(service, ServiceEncoder)
    assert service.name == "bge-small"


def test_build_encoder_refuses_contradictory_settings() -> None:
    with pytest.raises(EncoderConfigError, match="PERSYN_ENCODER_BASE_URL"):
        build_encoder(Settings(encoder="openai-compatible"))
    with pytest.raises(EncoderConfigError, match="persyn memory reindex"):
        build_encoder(Settings(encoder="local", embedding_dimensions=768))


def test_api_key_never_appears_in_settings_output() -> None:
    settings = Settings(encoder="openai-compatible", encoder_api_key="sk-secret-value")
    assert "sk-secret-value" not in repr(settings)
    assert "sk-secret-value" not in str(settings.model_dump())


@given(st.lists(st.integers(min_value=2, max_value=MAX_TOKENS), max_size=200))
def test_any_lengths_are_batched_within_both_budgets_each_once(lengths: list[int]) -> None:
    # The planner sees only true token counts, so no text, however dense, can slip past it.
    batches = LocalEncoder()._batches(lengths)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) <= BATCH_SIZE
        assert len(batch) == 1 or len(batch) * longest <= BATCH_TOKENS
        assert len(batch) == 1 or len(batch) * longest * longest <= ATTENTION_CELLS
