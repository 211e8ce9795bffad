"""Cost from the price table: tokens and units in, USD out (or ``None`` when unpriced).

An unpriced record is still counted everywhere; it just carries no cost, and reports say how
many such records they hold instead of guessing a price.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from schemas.models import UsageRecord
from schemas.pricing import ModelPrice, PriceTable

log = logging.getLogger(__name__)

_PER_MILLION = 1_000_000
_T = TypeVar("_T")


class PriceTableError(ValueError):
    """The price table cannot be read; the message says what to fix."""


def load_price_table(path: Path) -> PriceTable:
    """Read the operator's price table; a missing file is an empty table.

    Raises:
        PriceTableError: The file is not valid TOML or not a price table.
    """
    if not path.exists():
        return PriceTable()
    try:
        return PriceTable.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (tomllib.TOMLDecodeError, ValidationError, UnicodeDecodeError) as err:
        first = str(err).splitlines()[0]
        raise PriceTableError(f"price table {path.name} is invalid ({first}): fix it") from err


def load_or_empty(path: Path) -> PriceTable:
    """Like :func:`load_price_table`, but a broken table leaves everything unpriced.

    Metering is optional, so a typo in the table must not stop a worker; it is logged loudly.
    """
    try:
        return load_price_table(path)
    except PriceTableError as err:
        log.error("%s; usage is counted but not costed until then", err)
        return PriceTable()


def _lookup(table: Mapping[str, _T], model: str) -> _T | None:
    """The entry for ``model``, or for the longest key it extends with ``-`` (a dated release)."""
    if model in table:
        return table[model]
    matches = [key for key in table if model.startswith(f"{key}-")]
    return table[max(matches, key=len)] if matches else None


def token_cost(
    price: ModelPrice,
    *,
    input_tokens: int,
    output_tokens: int,
    cached_read_tokens: int = 0,
    cached_write_tokens: int = 0,
) -> float | None:
    """USD for the tokens of one call; ``None`` if a cached count has no price."""
    if cached_read_tokens and price.cached_read is None:
        return None
    if cached_write_tokens and price.cached_write is None:
        return None
    micro = (
        input_tokens * price.input
        + output_tokens * price.output
        + cached_read_tokens * (price.cached_read or 0.0)
        + cached_write_tokens * (price.cached_write or 0.0)
    )
    return micro / _PER_MILLION


def unit_cost(table: PriceTable, *, model: str, units: int, variant: str | None) -> float | None:
    """USD for ``units`` of non-token work (images, ...); ``None`` if that work is unpriced."""
    prices = _lookup(table.units, model)
    if prices is None:
        return None
    each = prices.get(variant or "default", prices.get("default"))
    return None if each is None else units * each


def price(record: UsageRecord, table: PriceTable) -> UsageRecord:
    """``record`` with its cost resolved from ``table``.

    A record that already carries a cost (work priced by its producer) keeps it. Token-only
    records are priced per million tokens; records with units must arrive pre-costed (see
    :mod:`observability.metering.producer`), since a unit's price depends on its variant.
    """
    if record.cost_usd is not None or record.units:
        return record
    model_price = _lookup(table.models, record.model)
    if model_price is None:
        return record
    cost = token_cost(
        model_price,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        cached_read_tokens=record.cached_read_tokens,
        cached_write_tokens=record.cached_write_tokens,
    )
    return record if cost is None else record.model_copy(update={"cost_usd": cost})
