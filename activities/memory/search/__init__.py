"""Dialog search (spec §4.6): hybrid lexical and semantic ranking with safe filters."""

from activities.memory.search.activities import DialogSearchActivities
from activities.memory.search.fusion import FusionParams
from activities.memory.search.indexing import index_turns
from activities.memory.search.service import DialogSearch, SearchTimeoutError

__all__ = [
    "DialogSearch",
    "DialogSearchActivities",
    "FusionParams",
    "SearchTimeoutError",
    "index_turns",
]
