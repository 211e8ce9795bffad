"""Reply drafts on the activity side: store the model's answer, load it back by ID.

The response model's answer is written to ``drafts`` once; the activation's later steps get
its ID (``DraftRef``) and load the text here, so workflow history does not carry the reply
through every step. Inputs recorded before drafts existed carry the text itself, and pass
through unchanged.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from activities.recent import DRAFTS
from store.db import Database
from store.queries.drafts import draft_text

M = TypeVar("M", bound=BaseModel)


async def load_draft(db: Database, draft_id: str) -> str:
    """The text of draft ``draft_id``: kept here if this process wrote it, else stored.

    Raises:
        ApplicationError: Non-retryable, type ``DraftMissing``, if there is no such draft.
    """
    if (kept := DRAFTS.get(draft_id)) is not None:
        return kept
    text = await draft_text(db.lane, draft_id=draft_id)
    if text is None:
        raise ApplicationError(
            f"draft {draft_id} is not stored (dropped by retention?)",
            type="DraftMissing",
            non_retryable=True,
        )
    return text


async def with_candidate(db: Database | None, data: M) -> M:
    """``data`` with its ``candidate`` loaded from its ``draft_id``, when it has one.

    A candidate already loaded (one step handing the text to the next within an activity) is
    kept: the draft is read once per step, not once per check.

    Raises:
        ApplicationError: The draft is missing, or there is no database to load it from.
    """
    draft_id = getattr(data, "draft_id", None)
    loaded: object = getattr(data, "candidate", None)
    if draft_id is None or loaded:
        return data
    if db is None:
        raise ApplicationError(
            "a draft reference needs the database", type="DraftMissing", non_retryable=True
        )
    return data.model_copy(update={"candidate": await load_draft(db, draft_id)})
