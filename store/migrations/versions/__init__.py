"""Schema revisions, one chain with one head.

``0012_web_tenants`` merged the branches that areas once opened from a common parent. Every
revision after it is ``NNNN_snake_case.py``, numbered above every existing one, with its file
stem as its revision ID and the head as its ``down_revision`` (``docs/operations.md``, "Schema
migrations"; ``tests/store/test_migrations.py`` checks it). Existing revision IDs never change:
deployed databases record them in ``alembic_version``.
"""
