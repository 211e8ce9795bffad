"""Dialog search as Temporal activities: the memory-search tool and background turn indexing."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.memory.encoder import Encoder, EncoderUnavailableError
from activities.memory.search.indexing import index_turns
from activities.memory.search.service import DialogSearch
from schemas.memory_search import (
    DialogSearchQuery,
    DialogSearchResult,
    IndexTurnsInput,
    IndexTurnsResult,
)
from store.db import Database
from store.queries.search import SearchInputError


class DialogSearchActivities:
    """Search over stored dialog, and embedding of turns written without a vector.

    Args:
        db: The database.
        encoder: The configured encoder (its absence only makes search lexical).
    """

    def __init__(self, db: Database, encoder: Encoder | None) -> None:
        self._db = db
        self._encoder = encoder
        self._search = DialogSearch(db, encoder)

    @activity.defn(name="memory.search_dialog")
    async def search_dialog(self, query: DialogSearchQuery) -> DialogSearchResult:
        """Run a dialog search; a query the caller got wrong fails without retries."""
        try:
            return await self._search.run(query)
        except SearchInputError as err:
            raise ApplicationError(str(err), type="SearchInputError", non_retryable=True) from err

    @activity.defn(name="memory.index_turns")
    async def index_turns(self, data: IndexTurnsInput) -> IndexTurnsResult:
        """Embed up to ``limit`` turns lacking a vector; an absent encoder is not a failure."""
        if self._encoder is None:
            return IndexTurnsResult(embedded=0, notice="no encoder configured")
        try:
            done = await index_turns(self._db, self._encoder, data.agent, data.limit)
        except EncoderUnavailableError as err:
            # Fail soft: the next scheduled run catches up; retrying now would hit it again.
            return IndexTurnsResult(embedded=0, notice=str(err))
        return IndexTurnsResult(embedded=done)
