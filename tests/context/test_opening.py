"""A long conversation keeps its opening in context beside its latest turns."""

from __future__ import annotations

from activities.memory.recall import quoted
from schemas.models import TaskType
from store.queries.recall import Candidate
from tests.harness import Harness

OPENING = "How this conversation began"


async def test_past_the_window_the_first_turns_are_shown_pinned_and_fenced(
    harness: Harness,
) -> None:
    agent = (await harness.create_agent()).handle
    await harness.say(agent, "Hi! I'm planning a trip to Lisbon in May.")
    for n in range(21):  # 44 turns in all: past the 40-turn window
        await harness.say(agent, f"Small talk number {n}.")
    requests = [r for r in harness.provider.requests if r.task is TaskType.RESPOND]
    early, last = requests[5].system, requests[-1].system

    assert OPENING not in early  # the window still holds the opening
    block = last.split(OPENING, 1)[1]
    assert "planning a trip to Lisbon in May" in block.split("</", 1)[0]
    assert "<material" in last.split(OPENING, 1)[1][:200]  # fenced, as dialog is


def candidate(first: str | None, last: str | None) -> Candidate:
    return Candidate(
        id="m",
        channel_id="c",
        summary="s",
        created_at=None,  # type: ignore[arg-type]
        emotion=None,
        sensitivity="private",
        participants=[],
        lexemes=[],
        turn_first=first,
        turn_last=last,
    )


def test_a_memory_of_turns_quoted_whole_is_not_shown_again() -> None:
    window, opening = ["t5", "t6", "t7"], ["t0", "t1"]
    assert quoted(candidate("t5", "t7"), [window, opening])
    assert quoted(candidate("t0", "t1"), [window, opening])
    assert not quoted(candidate("t1", "t5"), [window, opening])  # the middle is not quoted
    assert not quoted(candidate("t2", "t3"), [window, opening])
    assert not quoted(candidate(None, None), [window, opening])
