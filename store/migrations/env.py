"""Alembic environment: runs the migrations against the URL and options given by store.migrate."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool
from sqlmodel import SQLModel

import store.tables  # noqa: F401  (registers every table on SQLModel.metadata)

config = context.config
url = config.get_main_option("sqlalchemy.url")
assert url, "store.migrate sets sqlalchemy.url"
engine = create_engine(url, poolclass=pool.NullPool)
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=SQLModel.metadata)
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
