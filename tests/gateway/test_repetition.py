"""Degenerate repetition is cut from a reply, and a stream never shows the repeated sentence."""

from __future__ import annotations

import re

from activities.gateway.repetition import (
    RepetitionGuard,
    cut_repetition,
    last_full_sentence,
    repeated_sentence,
    sentence_keys,
)

LOOP = (
    "Hello Sam, welcome to the team! I'm glad to have you on board. "
    "I'm glad to have you on the team. I'm glad to have you on the team. "
    "I'm glad to have you on the team. I'm glad"
)


def stream(text: str) -> tuple[str, RepetitionGuard]:
    guard = RepetitionGuard()
    shown = "".join(guard.feed(piece) for piece in re.findall(r"\S+\s*", text))
    return shown + guard.finish(), guard


def test_the_reply_is_cut_before_the_first_repeated_sentence() -> None:
    assert cut_repetition(LOOP) == (
        "Hello Sam, welcome to the team! I'm glad to have you on board. "
        "I'm glad to have you on the team."
    )
    assert repeated_sentence(LOOP) == "I'm glad to have you on the team."


def test_a_repeat_is_found_regardless_of_case_and_punctuation() -> None:
    text = "Tide pools are full of life. They are small worlds! tide pools are full of life"

    assert cut_repetition(text) == "Tide pools are full of life. They are small worlds!"


def test_a_reply_without_repeats_is_kept_whole() -> None:
    text = "Tide pools are full of life.\nCrabs hide under rocks. Anemones close at low tide."

    assert cut_repetition(text) == text
    assert repeated_sentence(text) is None


def test_short_interjections_may_repeat() -> None:
    text = "Yes. I think so. Yes. It is a lovely idea."

    assert cut_repetition(text) == text


def test_a_stream_never_shows_the_repeated_sentence() -> None:
    shown, guard = stream(LOOP)

    assert shown.rstrip() == cut_repetition(LOOP)
    assert guard.stopped
    assert shown.count("on the team") == 1


def test_a_stream_shows_a_new_sentence_as_soon_as_it_differs() -> None:
    guard = RepetitionGuard()
    assert guard.feed("The sea is calm. ") == "The sea is calm. "
    # "The sea" could still be the first sentence again: held back...
    assert guard.feed("The sea") == ""
    # ...until it differs.
    assert guard.feed(" breeze is cool.") == "The sea breeze is cool."
    assert guard.finish() == ""


def test_a_clean_stream_shows_everything() -> None:
    text = "Tide pools are small worlds. Crabs hide under rocks. Come and see them."
    shown, guard = stream(text)

    assert shown == text
    assert not guard.stopped


def test_an_unfinished_sentence_is_dropped_and_a_finished_reply_kept() -> None:
    assert last_full_sentence("Crabs hide. Anemones close at") == "Crabs hide."
    assert last_full_sentence("Crabs hide. Anemones close!") == "Crabs hide. Anemones close!"
    assert last_full_sentence("no sentence has ended yet") == "no sentence has ended yet"


def test_a_sentence_said_in_an_earlier_reply_is_cut_and_never_streamed() -> None:
    earlier = sentence_keys(["Ava, I'm so glad you're enjoying your adventure! Tell me more."])
    reply = "Ava, I'm so glad you're enjoying your adventure! Seals love harbours."

    assert cut_repetition(reply, earlier) == ""
    guard = RepetitionGuard(seen=set(earlier))
    shown = "".join(guard.feed(p) for p in re.findall(r"\S+\s*", reply)) + guard.finish()
    assert shown == ""
    fresh = "Seals love harbours. Ava, I'm so glad you're enjoying your adventure!"
    assert cut_repetition(fresh, earlier) == "Seals love harbours."
