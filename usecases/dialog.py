"""An agent's searchable dialog from a client: search it, embed what is missing, re-encode.

Each use case opens the store and the configured encoder and closes both, even on error.
"""

from __future__ import annotations

from collections.abc import Callable

from activities.memory.encoder import Encoder
from activities.memory.encoders import build_encoder
from activities.memory.encoders.reindex import reindex as reindex_all
from activities.memory.search import DialogSearch, index_turns
from schemas.ids import is_ulid
from schemas.memory_search import DialogSearchQuery, DialogSearchResult
from schemas.settings import Settings
from store.db import Database
from store.queries.search import channel_by_key
from usecases.store import open_store


async def _channel_ids(db: Database, agent: str, channels: list[str]) -> list[str] | None:
    if not channels:
        return None
    found = []
    async with db.session() as session:
        for channel in channels:
            found.append(
                channel.upper()
                if is_ulid(channel.upper())
                else await channel_by_key(session, agent=agent, key=channel)
            )
    return found


async def search_dialog(
    *, settings: Settings, spec: DialogSearchQuery, channels: list[str]
) -> DialogSearchResult:
    """Search the agent's stored dialog, ranked by words and meaning, narrowed by filters.

    ``channels`` are channel IDs or ``service:channel`` keys (none: every channel).
    """
    async with open_store(settings, pool_size=2) as db:
        encoder = build_encoder(settings)
        try:
            query = spec.model_copy(
                update={"channel_ids": await _channel_ids(db, spec.agent, channels)}
            )
            return await DialogSearch(db, encoder).run(query)
        finally:
            await encoder.aclose()


async def index_dialog(*, settings: Settings, agent: str, limit: int) -> int:
    """Embed up to ``limit`` of the agent's dialog turns that have no embedding yet.

    Raises:
        EncoderUnavailableError: the encoder cannot be reached.
    """
    async with open_store(settings, pool_size=2) as db:
        encoder: Encoder = build_encoder(settings)
        try:
            return await index_turns(db, encoder, agent, limit)
        finally:
            await encoder.aclose()


async def reindex(*, settings: Settings, progress: Callable[[str, int], None]) -> dict[str, int]:
    """Re-encode every memory and dialog turn with the configured encoder (it resumes).

    Raises:
        EncoderUnavailableError: the encoder cannot be reached.
        DimensionMismatchError: the vector columns cannot take the encoder's dimensions.
    """
    async with open_store(settings, pool_size=2) as db:
        encoder = build_encoder(settings)
        try:
            return await reindex_all(db, encoder, progress=progress)
        finally:
            await encoder.aclose()
