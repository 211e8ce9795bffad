"""A note's text over arbitrary Unicode: a clear one-line refusal, or text every store holds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.notes import NoteError, contained, note_text, similarity
from schemas.text import unstorable

LIMIT = 64


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_a_note_is_refused_in_one_line_or_kept_storable_and_within_its_bytes(text: str) -> None:
    try:
        kept = note_text(text, max_bytes=LIMIT)
    except NoteError as err:
        assert "\n" not in str(err) and str(err).startswith("the note ")
        return
    assert kept and kept == kept.strip() and unstorable(kept) is None
    assert len(kept.encode()) <= LIMIT


def test_a_short_note_restating_a_longer_one_is_similar() -> None:
    longer = "Max is allergic to peanuts; never suggest a recipe with them."
    assert similarity("Max is allergic to peanuts.", longer) < 0.5  # Jaccard alone misses it
    assert contained("Max is allergic to peanuts.", longer)
    assert not contained("Max is a baker.", "Max is allergic to peanuts.")
    assert not contained("Max.", "Max is allergic to peanuts.")  # too few words to judge
