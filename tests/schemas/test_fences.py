"""Fence markup never leaves the platform (``schemas/fences.py``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.fences import TAG, without_fence_tags

MARKUP = re.compile(rf"<\s*/?\s*{TAG}\b", re.IGNORECASE)

pieces = st.lists(
    st.one_of(
        st.text(max_size=20),
        st.sampled_from(
            [
                f'<{TAG} source="memory" from="you" trust="recalled">',
                f"</{TAG}>",
                f'< {TAG.upper()} source="quick_facts,"',
                f"</ {TAG} >",
                "\n",
            ]
        ),
    ),
    max_size=8,
)


@given(parts=pieces)
def test_no_fence_tag_survives_and_no_reply_is_emptied(parts: list[str]) -> None:
    text = "".join(parts)
    cleaned = without_fence_tags(text)
    if MARKUP.search(text) is None:
        assert cleaned == text
        return
    assert MARKUP.search(cleaned) is None
    assert cleaned.strip()  # only markup: kept, made inert


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'I remember <material source="memory" from="x">the lake</material> well',
            "I remember the lake well",
        ),
        ('<material source="quick_facts,"\nYou like tea.', "You like tea."),
        ("Hello!\n\n</material>\n\nBye.", "Hello!\n\nBye."),
        ("a <materials> list", "a <materials> list"),
        ("</material>", "[/material>"),
    ],
)
def test_the_tags_go_and_what_they_held_stays(text: str, expected: str) -> None:
    assert without_fence_tags(text) == expected
