"""The vector columns' size against the encoder's: a mismatch needs a reindex, not a crash."""

from __future__ import annotations

import re

from sqlalchemy import text

from store.db import Database

VECTOR_COLUMNS = (("memory_records", "embedding"), ("dialog_turns", "embedding"))
"""Every column holding encoder output; a reindex resizes and refills them all."""


class DimensionMismatchError(RuntimeError):
    """Stored vectors and the configured encoder disagree on size."""


async def stored_dimensions(db: Database) -> dict[str, int | None]:
    """Each vector column's declared size (``None``: the column is missing or unsized)."""
    found: dict[str, int | None] = {}
    async with db.engine.connect() as connection:
        for table, column in VECTOR_COLUMNS:
            row = (
                await connection.execute(
                    text(
                        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                        "WHERE attrelid = to_regclass(:t) AND attname = :c AND NOT attisdropped"
                    ),
                    {"t": table, "c": column},
                )
            ).first()
            match = re.fullmatch(r"vector\((\d+)\)", str(row[0])) if row is not None else None
            found[f"{table}.{column}"] = int(match.group(1)) if match else None
    return found


async def check_dimensions(db: Database, dimensions: int) -> None:
    """Make sure the stored vectors have ``dimensions`` components.

    Raises:
        DimensionMismatchError: A vector column has another size (one line, says what to run).
    """
    for column, size in (await stored_dimensions(db)).items():
        if size is not None and size != dimensions:
            raise DimensionMismatchError(
                f"{column} holds {size}-dimensional vectors but the encoder gives {dimensions}: "
                "run `persyn memory reindex`"
            )
