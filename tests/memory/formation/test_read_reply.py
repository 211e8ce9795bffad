"""Formation replies are read the way small models write them, and refused when they miss."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from activities.memory.formation.calls import read_reply
from schemas.memory_formation import SummaryReply


def test_a_summary_with_raw_line_breaks_inside_its_string_is_read() -> None:
    # What SmolLM2 on the local model server returned for an imported conversation.
    text = '{"summary": "I met Sam.\nSam adopted a beagle named Biscuit.\tShe howls."}'
    reply = read_reply(text, SummaryReply)
    assert reply.summary == "I met Sam.\nSam adopted a beagle named Biscuit.\tShe howls."


def test_a_fenced_reply_is_read() -> None:
    reply = read_reply('```json\n{"summary": "I listened."}\n```', SummaryReply)
    assert reply.summary == "I listened."


@pytest.mark.parametrize("text", ["not json", '{"summary": 3}', '{"other": "x"}', ""])
def test_a_reply_that_misses_the_schema_is_refused(text: str) -> None:
    with pytest.raises(ValidationError):
        read_reply(text, SummaryReply)
