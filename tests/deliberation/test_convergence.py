"""The right to silence between agents (``activities.deliberation.convergence``).

A reply that only agrees with or restates the message it answers is not sent, which ends a
converged conversation; a reply that contradicts it has added something, and an agent's first
reply is sent whatever the screen reads in it (``DecisionActivities._under_way``): on
SmolLM2's replies the screen had ended 3 of 20 openings at the first or second reply.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from activities.deliberation.convergence import adds_nothing

OPENING = "Then we need two guides, one on the stairs and one in the lamp room."


@pytest.mark.parametrize(
    "reply",
    ["I agree, two guides.", "Yes, that's right.", "Exactly: the stairs and the lamp room."],
)
def test_agreeing_or_restating_adds_nothing(reply: str) -> None:
    assert adds_nothing(reply, OPENING) is not None


@pytest.mark.parametrize(
    "reply",
    [
        "That's not true, one guide is enough.",
        "I disagree: the lamp room is closed to visitors.",
        "We could also sell tea by the door and ask the baker for scones.",
    ],
)
def test_contradicting_or_adding_is_sent(reply: str) -> None:
    assert adds_nothing(reply, OPENING) is None


@given(st.text(max_size=300), st.text(max_size=300))
def test_any_pair_of_texts_gets_a_verdict(reply: str, answered: str) -> None:
    verdict = adds_nothing(reply, answered)
    assert verdict is None or verdict.endswith("silence ends a conversation that has converged.")


@given(
    st.sampled_from(["That's not", "It's not", "That isn't", "You're not", "I don't"]),
    st.sampled_from(["true", "right", "correct", "agree", "quite right", "really sure"]),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=80),
)
def test_no_contradiction_is_read_as_agreement(lead: str, word: str, rest: str) -> None:
    # Words of the answered message only: what follows could otherwise pass as restating.
    assert adds_nothing(f"{lead} {word}, {rest}", OPENING) is None
