"""What a model sends back is input too: any reply text and any tool call, whatever bytes they
hold, is kept in a form every store can hold, so no model output can fail the step that got it."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.events import first_unstorable
from schemas.models import ModelResponse, ProviderName, ToolCall
from schemas.text import unstorable

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300)
@given(st.text(), st.text(), JSON)
def test_any_tool_call_a_model_sends_is_kept_and_storable(
    ident: str, name: str, value: object
) -> None:
    call = ToolCall.as_sent(ident, name, value)
    assert first_unstorable(call.model_dump(), "") is None
    if isinstance(value, dict) and first_unstorable(value, "") is None:
        assert call.arguments == value and call.raw_arguments is None
    else:
        assert call.raw_arguments is not None and not call.arguments
        json.loads(call.raw_arguments)  # still the JSON it was sent as


@given(st.text())
def test_any_reply_text_a_model_sends_is_kept_storable(text: str) -> None:
    reply = ModelResponse(text=text, model="m", provider=ProviderName.SCRIPTED)
    assert unstorable(reply.text) is None and len(reply.text) == len(text)
