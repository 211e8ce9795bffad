"""Shared plumbing of the deliberation activities: stored prompts, token streams, clipped text.

Their model calls go through :func:`activities.gateway.activity_call.complete`.

Text handed to a critic, the refiner or the judge is fenced with the one fence of the project
(:mod:`activities.context.fencing`), labelled with where it came from.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.channels.stream import NotifySink
from activities.gateway.base import DeltaCallback
from activities.recent import PROMPTS
from schemas.streaming import StreamTarget
from store.db import Database
from store.queries.runtime import load_prompt
from store.tables import PromptRow


async def stored_prompt(db: Database, prompt_id: str) -> PromptRow:
    """The stored prompt ``prompt_id``.

    Raises:
        ApplicationError: ``PromptMissing`` (not retryable): nothing to critique against.
    """
    row = PROMPTS.get(prompt_id)
    if row is None:  # assembled in another worker, or before this one started
        async with db.autocommit() as session:
            row = await load_prompt(session, prompt_id=prompt_id)
    if row is None:
        raise ApplicationError(
            f"prompt {prompt_id} is missing", type="PromptMissing", non_retryable=True
        )
    return row


@contextlib.asynccontextmanager
async def token_stream(
    dsn: str, target: StreamTarget | None
) -> AsyncIterator[DeltaCallback | None]:
    """A best-effort token sink for ``target``; ``None`` when there is none or it cannot open."""
    if target is None:
        yield None
        return
    try:
        sink = NotifySink(dsn, target.key, target.phase)
        await sink.__aenter__()
    except Exception:
        activity.logger.info("token stream unavailable; refining without it", exc_info=True)
        yield None
        return
    try:
        yield sink.delta
    finally:
        with contextlib.suppress(Exception):
            await sink.__aexit__(None, None, None)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marking the cut."""
    text = text.strip()
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


_FENCED_JSON = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def find_json(text: str) -> tuple[Any, bool]:
    """The JSON document in a model's reply, and whether it had to be dug out of other text.

    Raises:
        ValueError: There is no JSON document in ``text``.
    """
    try:
        return json.loads(text), False
    except ValueError:
        pass
    fenced = _FENCED_JSON.search(text)
    candidates = [fenced.group(1)] if fenced else []
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate), True
        except ValueError:
            continue
    raise ValueError("the output is not JSON")
