"""The voice door over arbitrary JSON: a call turn, or a one-line refusal, never a crash."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.voice import CALL_ID_PATTERN, CallCompletionRequest
from webchannel.body import BodyError, parse
from webchannel.voice.session import merge_fragments

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)

MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "robot"]), "content": st.text()}
)
BODYISH = st.fixed_dictionaries(
    {"model": st.text(max_size=40), "messages": st.lists(MESSAGE, max_size=4)},
    optional={
        "stream": JSON,
        "user": st.text(max_size=140),
        "call": st.dictionaries(st.sampled_from(["id", "type", "customer"]), JSON),
        "metadata": st.dictionaries(st.sampled_from(["call_id", "caller", "direction"]), JSON),
        "max_tokens": JSON,
    },
)


def _checked(value: Any) -> None:
    raw = json.dumps(value).encode()
    try:
        body = parse(raw, CallCompletionRequest)
    except BodyError as err:
        assert err.status in (400, 422)
        assert err.detail and "\n" not in err.detail
        return
    call_id = body.call_id(None)
    assert call_id is None or re.fullmatch(CALL_ID_PATTERN, call_id)
    assert body.messages and len(body.messages) <= 200
    body.last_user_text(), body.caller(), body.direction()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
def test_any_json_is_a_turn_or_a_one_line_refusal(value: Any) -> None:
    _checked(value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BODYISH)
def test_any_chat_shaped_body_is_a_turn_or_a_one_line_refusal(value: dict[str, Any]) -> None:
    _checked(value)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=6))
def test_merged_fragments_keep_every_word_once(fragments: list[str]) -> None:
    merged = merge_fragments(fragments)
    for fragment in fragments:
        assert fragment.strip() in merged


def test_a_revised_fragment_replaces_the_one_it_extends() -> None:
    assert merge_fragments(["I want", "I want to book", "a table"]) == "I want to book a table"
