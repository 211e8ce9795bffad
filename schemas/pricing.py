"""The operator-maintained price table: what a token or a unit of non-token work costs.

Prices are configuration, not truth (Appendix C): they change, and the operator keeps the
table. Cost is derived once, when a usage record is made, and travels on the record, so every
surface (counters, event log, ledger) shows the same figure and no report ever re-prices.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ModelPrice(BaseModel):
    """USD per million tokens for one model.

    ``input`` prices uncached input tokens; cached reads and writes are priced apart. A
    missing cached price leaves a record that used cached tokens unpriced rather than guessed.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, description="USD per million uncached input tokens.")
    output: float = Field(ge=0, description="USD per million output tokens.")
    cached_read: float | None = Field(default=None, ge=0, description="Cache reads.")
    cached_write: float | None = Field(default=None, ge=0, description="Cache writes.")


class PriceTable(BaseModel):
    """Every price the operator maintains.

    File form (TOML, ``$PERSYN_HOME/prices.toml``)::

        [models."claude-sonnet-4-5"]        # USD per million tokens
        input = 3.0
        output = 15.0
        cached_read = 0.30
        cached_write = 3.75

        [units."gpt-image-1"]               # USD per unit (image), by variant
        "1024x1024/medium" = 0.042
        default = 0.042

    A model key also prices dated releases of that model: ``claude-sonnet-4-5`` prices
    ``claude-sonnet-4-5-20250929`` (the longest matching key wins).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    models: dict[str, ModelPrice] = Field(default_factory=dict)
    units: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="Model -> variant (or 'default') -> USD per unit."
    )
