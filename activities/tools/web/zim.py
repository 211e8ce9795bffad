"""A ZIM file (an offline archive such as a Wikipedia dump) as a reference archive.

libzim reads the file and searches its own full-text index, offline. A ZIM file built without
a full-text index is searched by title suggestions instead.
"""

from __future__ import annotations

import threading
from pathlib import Path

import trafilatura
from libzim.reader import Archive
from libzim.search import Query, Searcher
from libzim.suggestion import SuggestionSearcher

from activities.tools.registry import ToolError
from schemas.web import ReferenceHit

_EXCERPT_CHARS = 300


def _excerpt(text: str, words: list[str]) -> str:
    lowered = text.lower()
    at = min((i for w in words if (i := lowered.find(w.lower())) >= 0), default=0)
    start = max(0, at - _EXCERPT_CHARS // 3)
    piece = " ".join(text[start : start + _EXCERPT_CHARS].split())
    return ("… " if start else "") + piece + (" …" if start + _EXCERPT_CHARS < len(text) else "")


class ZimArchive:
    """One ZIM file, opened on first search."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._archive: Archive | None = None

    def _open(self) -> Archive:
        if self._archive is None:
            if not self.path.is_file():
                raise ToolError(f"the reference archive {self.path.name!r} is not there")
            try:
                self._archive = Archive(str(self.path))
            except RuntimeError as err:
                raise ToolError(f"{self.path.name} is not a readable ZIM file ({err})") from None
        return self._archive

    def _paths(self, archive: Archive, query: str, limit: int) -> list[str]:
        if archive.has_fulltext_index:
            search = Searcher(archive).search(Query().set_query(query))
            return list(search.getResults(0, limit))
        suggestions = SuggestionSearcher(archive).suggest(query)
        return list(suggestions.getResults(0, limit))

    def search(self, query: str, *, limit: int = 5) -> list[ReferenceHit]:
        """The best ``limit`` entries for ``query``, each with an excerpt of its text.

        Raises:
            ToolError: The file is missing or not a ZIM file.
        """
        words = query.split()
        if not words:
            raise ToolError("give some words to look up")
        with self._lock:
            archive = self._open()
            hits: list[ReferenceHit] = []
            for path in self._paths(archive, query, limit):
                entry = archive.get_entry_by_path(path)
                raw = bytes(entry.get_item().content).decode("utf-8", errors="replace")
                text = trafilatura.extract(raw, favor_recall=True) or ""
                hits.append(
                    ReferenceHit(
                        path=f"{self.path.name}:{path}",
                        title=entry.title,
                        excerpt=_excerpt(text, words),
                    )
                )
        return hits
