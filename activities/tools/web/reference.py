"""``lookup_reference``: full-text search over a locally hosted folder of documents.

The archive is read-only reference material the operator drops in a folder (markdown, text or
HTML), not agent state, so it is indexed with SQLite FTS5 in memory rather than in PostgreSQL:
no migration, no rows to keep in step with files, and an archive on one worker host needs
nothing from the database. The index is rebuilt when a file's name, size or mtime changes.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Protocol

import trafilatura
from pydantic import Field

from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.web import ReferenceHit, ReferenceResult

SUFFIXES = {".md", ".markdown", ".txt", ".text", ".html", ".htm"}

Signature = tuple[tuple[str, int, int], ...]


def _text_of(path: Path) -> tuple[str, str]:
    """A document's title and plain text (HTML through trafilatura)."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    title = path.stem.replace("_", " ").replace("-", " ")
    if path.suffix.lower() in (".html", ".htm"):
        metadata = trafilatura.extract_metadata(raw)
        if metadata is not None and metadata.title:
            title = metadata.title
        return title, trafilatura.extract(raw, favor_recall=True) or ""
    for line in raw.splitlines():
        if line.startswith("# "):
            return line[2:].strip(), raw
    return title, raw


class ReferenceArchive:
    """A folder of documents and its full-text index (built on first search)."""

    def __init__(self, root: Path, *, max_file_bytes: int = 5_000_000):
        self.root = root
        self._max_file_bytes = max_file_bytes
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._signature: Signature = ()

    def _files(self) -> list[Path]:
        return sorted(
            p
            for p in self.root.rglob("*")
            if p.is_file()
            and p.suffix.lower() in SUFFIXES
            and p.stat().st_size <= self._max_file_bytes
        )

    def _index(self) -> sqlite3.Connection:
        files = self._files()
        signature = tuple(
            (str(p.relative_to(self.root)), p.stat().st_size, p.stat().st_mtime_ns) for p in files
        )
        if self._db is not None and signature == self._signature:
            return self._db
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, title, body)")
        for path in files:
            title, body = _text_of(path)
            db.execute(
                "INSERT INTO docs VALUES (?, ?, ?)", (str(path.relative_to(self.root)), title, body)
            )
        db.commit()
        if self._db is not None:
            self._db.close()
        self._db, self._signature = db, signature
        return db

    def search(self, query: str, *, limit: int = 5) -> list[ReferenceHit]:
        """The best ``limit`` documents for ``query`` (words, all of which must match).

        Raises:
            ToolError: The archive folder is missing.
        """
        if not self.root.is_dir():
            raise ToolError(f"the reference archive {self.root.name!r} is not there")
        # Each word becomes a quoted term, so FTS5 operators in the query are plain words.
        terms = " ".join('"' + word.replace('"', '""') + '"' for word in query.split())
        if not terms:
            raise ToolError("give some words to look up")
        with self._lock:
            rows = (
                self._index()
                .execute(
                    "SELECT path, title, snippet(docs, 2, '**', '**', ' … ', 24) FROM docs "
                    "WHERE docs MATCH ? ORDER BY bm25(docs, 0, 5.0, 1.0) LIMIT ?",
                    (terms, limit),
                )
                .fetchall()
            )
        return [ReferenceHit(path=p, title=t, excerpt=e) for p, t, e in rows]


class Archive(Protocol):
    """A searchable reference archive: a folder of documents or a ZIM file."""

    def search(self, query: str, *, limit: int = 5) -> list[ReferenceHit]:
        """The best ``limit`` hits for ``query``."""
        ...


class LookupReferenceInput(ToolInput):
    """Input of ``lookup_reference``."""

    query: str = Field(min_length=1, max_length=500, description="Words to look up.")
    limit: int = Field(default=5, ge=1, le=20)


class LookupReference(Tool):
    """Search the offline reference archive."""

    name = "lookup_reference"
    description = (
        "Look facts up in the local offline reference archive (no live web): returns the "
        "best-matching documents with an excerpt around the matched words."
    )
    input_model = LookupReferenceInput
    output_model = ReferenceResult

    def __init__(self, *archives: Archive):
        self._archives = archives

    async def run(self, call: ToolRun, args: LookupReferenceInput) -> ReferenceResult:
        """Search each archive on a thread (a folder's first search builds its index)."""
        found = await asyncio.gather(
            *(asyncio.to_thread(a.search, args.query, limit=args.limit) for a in self._archives)
        )
        return ReferenceResult(hits=[hit for hits in found for hit in hits][: args.limit])
