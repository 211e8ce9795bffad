"""``persyn calls end`` refuses any text no transport gives as a call ID, in one line naming it.

Arbitrary Unicode reaches the door (a pasted line, an escape sequence, a NUL): each is refused
before anything reaches Temporal, with one line that quotes what was refused, cut short, and
says what an ID may hold. A well-formed ID passes the door.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import usecases.calls as calls
from schemas.settings import Settings
from schemas.voice import CALL_ID_PATTERN
from usecases.calls import BadCallIdError, end_call

WELL_FORMED = re.compile(CALL_ID_PATTERN)


class ReachedTheServerError(Exception):
    """The door let the ID through to the connection."""


async def _no_server(*_: object, **__: object) -> None:
    raise ReachedTheServerError


def _refusal(call_id: str) -> str | None:
    try:
        asyncio.run(end_call(Settings(), call_id))
    except BadCallIdError as err:
        return str(err)
    except ReachedTheServerError:
        return None
    raise AssertionError("end_call returned without a server")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_refused_in_one_line_naming_it_or_passes_the_door(call_id: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calls, "connect", _no_server)
        refusal = _refusal(call_id)
    if WELL_FORMED.fullmatch(call_id):
        assert refusal is None
        return
    assert refusal is not None
    assert refusal.isprintable() and len(refusal) < 200, refusal
    assert refusal.startswith("call ID " + ascii(call_id)[:20])
    assert refusal.endswith("1-128 letters, digits or _ . : @ + ~ - (the transport's ID)")


@settings(max_examples=100, deadline=None)
@given(st.from_regex(WELL_FORMED, fullmatch=True))
def test_every_well_formed_id_passes_the_door(call_id: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calls, "connect", _no_server)
        assert _refusal(call_id) is None
