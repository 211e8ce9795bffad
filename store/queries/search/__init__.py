"""Dialog search in SQL: BM25F over weighted tsvectors, pgvector neighbours, safe filters."""

from store.queries.search.bm25 import (
    Bm25Params,
    Corpus,
    corpus,
    fetching_terms,
    lexical_candidates,
    query_terms,
)
from store.queries.search.filters import (
    Filters,
    SearchInputError,
    channel_by_key,
    check_patterns,
    scope,
    set_timeout,
)
from store.queries.search.vectors import (
    TurnFeatures,
    listing,
    semantic_candidates,
    turn_features,
    turn_rows,
)

__all__ = [
    "Bm25Params",
    "Corpus",
    "Filters",
    "SearchInputError",
    "TurnFeatures",
    "channel_by_key",
    "check_patterns",
    "corpus",
    "fetching_terms",
    "lexical_candidates",
    "listing",
    "query_terms",
    "scope",
    "semantic_candidates",
    "set_timeout",
    "turn_features",
    "turn_rows",
]
