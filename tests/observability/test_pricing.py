"""The price table turns tokens and units into cost; what it does not price stays uncosted."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract import attribution
from observability.metering.pricing import (
    PriceTableError,
    load_or_empty,
    load_price_table,
    price,
    unit_cost,
)
from observability.metering.producer import work_record
from schemas.models import Attribution
from schemas.pricing import ModelPrice, PriceTable
from tests.observability.records import usage

TABLE = PriceTable(
    models={
        "claude-sonnet-4-5": ModelPrice(input=3.0, output=15.0, cached_read=0.3, cached_write=3.75),
        "claude-sonnet": ModelPrice(input=99.0, output=99.0),
        "gpt-4.1-mini": ModelPrice(input=0.4, output=1.6),
    },
    units={"gpt-image-1": {"1024x1024/high": 0.167, "default": 0.042}},
)


def test_tokens_are_priced_per_million_including_cached_reads_and_writes() -> None:
    record = usage(
        model="claude-sonnet-4-5",
        input_tokens=1_000_000,
        output_tokens=200_000,
        cached_read_tokens=500_000,
        cached_write_tokens=100_000,
    )
    assert price(record, TABLE).cost_usd == pytest.approx(3.0 + 3.0 + 0.15 + 0.375)


def test_a_dated_release_takes_the_longest_matching_price() -> None:
    record = usage(model="claude-sonnet-4-5-20250929", input_tokens=1_000_000, output_tokens=0)
    assert price(record, TABLE).cost_usd == pytest.approx(3.0)
    assert price(usage(model="claude-sonnetish"), TABLE).cost_usd is None


def test_unpriced_work_is_left_uncosted_not_guessed() -> None:
    assert price(usage(model="unknown-model"), TABLE).cost_usd is None
    # Cached tokens with no cached price: the record stays unpriced rather than understated.
    cached = usage(model="gpt-4.1-mini", cached_read_tokens=10)
    assert price(cached, TABLE).cost_usd is None


def test_a_record_priced_by_its_producer_keeps_its_cost() -> None:
    record = usage(model="gpt-4.1-mini", cost_usd=1.25)
    assert price(record, TABLE).cost_usd == 1.25


def test_units_are_priced_by_variant_with_a_default() -> None:
    assert unit_cost(
        TABLE, model="gpt-image-1", units=2, variant="1024x1024/high"
    ) == pytest.approx(0.334)
    assert unit_cost(TABLE, model="gpt-image-1", units=3, variant="512x512") == pytest.approx(0.126)
    assert unit_cost(TABLE, model="other-image-model", units=1, variant=None) is None


def test_work_outside_the_gateway_carries_its_cost_and_the_bound_attribution() -> None:
    token = attribution.use(Attribution(agent="ada", channel="web:home", conversation="c1"))
    try:
        image = work_record(
            stage="image", provider="openai", model="gpt-image-1", units=2, prices=TABLE
        )
        unpriced = work_record(stage="image", provider="x", model="x-image", units=1, prices=TABLE)
        delegated = work_record(stage="delegate", provider="sandbox", model="agent", cost_usd=0.5)
    finally:
        attribution.reset(token)
    assert image.cost_usd == pytest.approx(0.084)
    assert (image.agent, image.channel, image.conversation) == ("ada", "web:home", "c1")
    assert unpriced.units == 1 and unpriced.cost_usd is None
    assert delegated.cost_usd == 0.5
    # Already costed: pricing again by token never changes it.
    assert price(image, TABLE).cost_usd == image.cost_usd


def test_the_table_is_read_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(
        '[models."m-1"]\ninput = 1.0\noutput = 2.0\n\n[units."img"]\ndefault = 0.04\n',
        encoding="utf-8",
    )
    table = load_price_table(path)
    assert table.models["m-1"] == ModelPrice(input=1.0, output=2.0)
    assert table.units["img"]["default"] == 0.04
    assert load_price_table(tmp_path / "absent.toml") == PriceTable()


def test_a_broken_table_is_a_one_line_error_or_an_empty_table(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text('[models."m-1"]\ninput = "cheap"\n', encoding="utf-8")
    with pytest.raises(PriceTableError) as caught:
        load_price_table(path)
    assert "\n" not in str(caught.value) and "prices.toml" in str(caught.value)
    assert load_or_empty(path) == PriceTable()
