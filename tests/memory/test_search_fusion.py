"""Dialog search's fusion: the speaker a query names, and the cosine a reply borrows."""

from __future__ import annotations

import pytest

from activities.memory.search.fusion import Candidate, FusionParams, fuse


def ranked(candidates: list[Candidate], params: FusionParams) -> list[str]:
    found = fuse({c.turn_id: c for c in candidates}, params, lexical=True, semantic=True)
    return [c.turn_id for c in found]


def test_turns_of_the_speaker_the_query_names_weigh_more() -> None:
    def candidates(*, named: bool) -> list[Candidate]:
        return [
            Candidate("other", "c1", lexical=1.0, semantic=0.5),
            Candidate("named", "c2", lexical=0.8, semantic=0.5, speaker_named=named),
            Candidate("floor", "c3", lexical=0.1, semantic=0.1),
        ]

    assert ranked(candidates(named=True), FusionParams(speaker_boost=0.0))[0] == "other"
    assert ranked(candidates(named=True), FusionParams(speaker_boost=0.3))[0] == "named"
    # A query that names every candidate's speaker prefers none of them.
    everyone = [
        Candidate(c.turn_id, c.conversation_id, c.lexical, c.semantic, speaker_named=True)
        for c in candidates(named=True)
    ]
    assert ranked(everyone, FusionParams(speaker_boost=0.3))[0] == "other"


def test_a_reply_borrows_the_cosine_of_the_message_it_answers() -> None:
    candidates = [
        Candidate("plain", "c1", lexical=0.5, semantic=0.40, neighbour_semantic=0.10),
        Candidate("reply", "c2", lexical=0.5, semantic=0.38, neighbour_semantic=0.70),
        Candidate("floor", "c3", lexical=0.0, semantic=0.10),
    ]
    assert ranked(candidates, FusionParams(neighbour_cosine=0.0))[0] == "plain"
    assert ranked(candidates, FusionParams(neighbour_cosine=0.3))[0] == "reply"
    assert Candidate("alone", "c", semantic=0.5).smoothed(0.3) == pytest.approx(0.65)
    assert Candidate("unknown", "c").smoothed(0.3) is None
