"""The transport's call list, read: whatever it answers, only a call with the key is adopted."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from activities.voice.transport import DIAL_KEY, keyed_call
from schemas.voice import CALL_ID_PATTERN

KEY = "01JF0000000000000000000000"

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
CALL_ID = st.one_of(st.from_regex(CALL_ID_PATTERN, fullmatch=True), JSON)
METADATA = st.dictionaries(
    st.sampled_from([DIAL_KEY, "agent", "direction"]),
    st.one_of(st.just(KEY), st.just(KEY.lower()), st.just(KEY + " "), JSON),
    max_size=3,
)
# Shapes near a call of ours: the key in the wrong place, of the wrong type, or almost right.
NEAR_CALL = st.fixed_dictionaries(
    {"id": CALL_ID},
    optional={
        "status": JSON,
        "assistantOverrides": st.one_of(st.fixed_dictionaries({"metadata": METADATA}), JSON),
        "metadata": METADATA,
        "customer": JSON,
    },
)
ANSWER = st.one_of(JSON, st.lists(st.one_of(NEAR_CALL, JSON), max_size=6))


def _carries_key(call: Any) -> bool:
    if not isinstance(call, dict):
        return False
    overrides = call.get("assistantOverrides")
    metadata = overrides.get("metadata") if isinstance(overrides, dict) else None
    return isinstance(metadata, dict) and metadata.get(DIAL_KEY) == KEY


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANSWER)
def test_any_answer_is_read_without_error_and_only_a_keyed_call_is_adopted(answer: Any) -> None:
    found = keyed_call(answer, KEY)
    if found is None:
        return
    assert isinstance(answer, list)
    assert any(_carries_key(call) and call["id"] == found.call_id for call in answer)
    assert re.fullmatch(CALL_ID_PATTERN, found.call_id)
    assert len(found.status) <= 64


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(NEAR_CALL, JSON), max_size=6),
    st.integers(min_value=0, max_value=6),
    st.from_regex(CALL_ID_PATTERN, fullmatch=True),
    JSON,
)
def test_our_call_is_found_among_any_others(
    others: list[Any], at: int, call_id: str, status: Any
) -> None:
    ours = {"id": call_id, "status": status, "assistantOverrides": {"metadata": {DIAL_KEY: KEY}}}
    answer = [*others[:at], ours, *others[at:]]
    found = keyed_call(answer, KEY)
    assert found is not None
    # An earlier call that also carries the key would be the one dialled first: still ours.
    first = next(call for call in answer if _carries_key(call) and _valid_id(call))
    assert found.call_id == first["id"]


def _valid_id(call: dict[str, Any]) -> bool:
    value = call.get("id")
    return isinstance(value, str) and re.fullmatch(CALL_ID_PATTERN, value) is not None


def test_no_key_adopts_nothing() -> None:
    calls = [{"id": "c-1", "assistantOverrides": {"metadata": {DIAL_KEY: ""}}}]
    assert keyed_call(calls, "") is None
