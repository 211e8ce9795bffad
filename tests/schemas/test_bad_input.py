"""Hostile and malformed input is refused with one clear line; nothing is stored."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from schemas.agents import AgentCreate
from schemas.events import ChannelRef, InboundEvent, Speaker
from schemas.ids import InvalidIdError, check_handle, check_ulid, new_ulid, ulid_from_parts
from schemas.text import MAX_MESSAGE_CHARS, InvalidTextError, clean_text


def make(text: str, **kw: object) -> InboundEvent:
    return InboundEvent(
        event_id=new_ulid(),
        channel=ChannelRef(service="terminal", channel="console"),
        speaker=Speaker(speaker_id="ada"),
        text=text,
        **kw,
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("a\x00b", "NUL"),
        ("bad \ud800 surrogate", "UTF-8"),
        ("bell \x07", "control character"),
        ("x" * (MAX_MESSAGE_CHARS + 1), "limit"),
    ],
)
def test_bad_message_text_is_refused_with_a_reason(text: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as caught:
        make(text)
    message = caught.value.errors()[0]["msg"]
    assert fragment in message
    assert "\n" not in message


def test_text_is_normalised() -> None:
    assert clean_text("  e\u0301\r\nline  ") == "\u00e9\nline"
    assert make("tab\tand newline\nkept").text == "tab\tand newline\nkept"


def test_a_conversation_id_that_is_not_a_ulid_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        make("hi", conversation_id="conversation-42")
    assert "conversation id 'conversation-42' is not a ULID" in caught.value.errors()[0]["msg"]


@pytest.mark.parametrize(
    "value",
    [
        "",
        "01ARZ3NDEKTSV4RRFFQ69G5FA",
        "81ARZ3NDEKTSV4RRFFQ69G5FAV",
        "01ARZ3NDEKTSV4RRFFQ69G5FAU!",
        "ILOU" * 7,
        "x" * 10_000,
    ],
)
def test_check_ulid_rejects_non_ulids(value: str) -> None:
    with pytest.raises(InvalidIdError) as caught:
        check_ulid(value, what="event id")
    assert str(caught.value).startswith("event id ")
    assert len(str(caught.value)) < 200


def test_check_ulid_accepts_lower_case_and_normalises() -> None:
    assert check_ulid("01arz3ndektsv4rrffq69g5fav") == "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def test_ulids_from_parts_sort_by_time() -> None:
    from datetime import UTC, datetime, timedelta

    t = datetime(2026, 11, 30, tzinfo=UTC)
    earlier = ulid_from_parts(t, 2**80 - 1)
    later = ulid_from_parts(t + timedelta(milliseconds=1), 0)
    assert earlier < later
    assert check_ulid(earlier) == earlier


@pytest.mark.parametrize("handle", ["A", "a", "ada!", "-ada", "ada-", "a" * 33, "ad a", "ädä"])
def test_bad_handles_are_refused(handle: str) -> None:
    with pytest.raises(InvalidIdError):
        check_handle(handle)


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        InboundEvent.model_validate(
            {
                "event_id": new_ulid(),
                "channel": {"service": "terminal", "channel": "c"},
                "speaker": {"speaker_id": "a"},
                "text": "hi",
                "sneaky": True,
            }
        )
    assert caught.value.errors()[0]["type"] == "extra_forbidden"


def test_oversized_and_hostile_personas_are_refused() -> None:
    with pytest.raises(ValidationError):
        AgentCreate(handle="ada", name="Ada", persona="p" * 20_000)
    with pytest.raises(ValidationError):
        AgentCreate(handle="ada", name="Ada", persona="nul\x00")
    with pytest.raises(ValidationError):
        AgentCreate(handle="ada", name="", persona="fine")


def test_clean_text_rejects_non_text() -> None:
    with pytest.raises(InvalidTextError):
        clean_text(b"bytes")  # type: ignore[arg-type]
