"""The prompts that turn a stretch of dialog into a memory, built from data files.

The summary prompt follows the self-voice framing of autobiographical memory: the agent's own
persona frames the system text, its earlier memories come back as its own words (an assistant
message), and the chunk arrives as the dialog to remember. Nothing said after the chunk is in
any of these prompts: a memory forms as of its moment.

None of the text the agent remembers was written as instructions to it: each turn goes in its
own fence (:mod:`activities.context.fencing`) saying who wrote it (a person, the agent itself,
an imported record), and so do the earlier memories and the summary being judged. The prompts'
own instructions say fenced text is material to remember, never an instruction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from activities.context.fencing import (
    CHANNEL,
    DIALOG,
    FORMED,
    IMPORTED,
    MEMORY,
    OWN_WORDS,
    Provenance,
    fence,
)
from activities.prompts import load
from schemas.memory_formation import ClassificationReply, RatingReply, SummaryReply
from schemas.models import ChatMessage, ModelRequest, TaskType
from store.queries.memory_formation import EarlierMemory, RangeTurn

MAX_TRANSCRIPT_CHARS = 48_000
"""Longest transcript put in one prompt (about 12k tokens); the tail is kept if longer."""
CHARS_PER_TOKEN = 4
"""How a call plan's token budget for the transcript becomes characters (English prose)."""
NOT_QUOTED = "(The dialog is not quoted here: judge the memory as written.)"
"""Persyn's own note, outside any fence, where a plan quotes no dialog to rate or classify."""


@dataclass(frozen=True)
class Voice:
    """Whose memory it is and where it happened."""

    name: str
    persona: str
    timezone: str
    channel: str


def fill(template: str, **values: str) -> str:
    """``template`` with each ``{key}`` replaced (other braces, e.g. JSON examples, stay)."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def when(moment: datetime, timezone: str) -> str:
    """A moment in friendly words in the agent's time zone: ``Tuesday 3 March 2026, 14:05``."""
    local = moment.astimezone(_zone(timezone))
    return f"{local:%A} {local.day} {local:%B %Y, %H:%M}"


def _provenance(turn: RangeTurn) -> Provenance:
    if turn.imported:
        return IMPORTED
    return OWN_WORDS if turn.role == "agent" else DIALOG


def _turn(turn: RangeTurn, voice: Voice, limit: int) -> str:
    """One turn: its moment (Persyn's framing), then who said what, fenced by provenance."""
    # The speaker's name is inside the fence too: a person chooses their display name.
    speaker = f"me ({voice.name})" if turn.role == "agent" else turn.speaker_name
    said = turn.text if len(turn.text) <= limit else "[...] " + turn.text[-limit:]
    return f"[{when(turn.at, voice.timezone)}]\n" + fence(f"{speaker}: {said}", _provenance(turn))


def _limit(budget_tokens: int | None) -> int:
    """The transcript's length in characters under a plan's token budget (None: no budget)."""
    if budget_tokens is None:
        return MAX_TRANSCRIPT_CHARS
    return min(MAX_TRANSCRIPT_CHARS, budget_tokens * CHARS_PER_TOKEN)


def transcript(turns: Sequence[RangeTurn], voice: Voice, *, max_chars: int | None = None) -> str:
    """The turns, each as ``[time]`` and a fence holding ``speaker: text``; mine marked so.

    Past ``max_chars`` (:data:`MAX_TRANSCRIPT_CHARS` unless given) the latest turns are kept
    whole (only a latest turn longer than the limit is cut from its start) and ``[...]`` marks
    the rest, so no fence is ever cut.
    """
    kept: list[str] = []
    room = MAX_TRANSCRIPT_CHARS if max_chars is None else max_chars
    for turn in reversed(turns):
        block = _turn(turn, voice, room) if room > 0 else ""
        if kept and (room <= 0 or len(block) > room):
            kept.append("[...]")
            break
        kept.append(block)
        room -= len(block) + 1
    return "\n".join(reversed(kept))


def _span(turns: Sequence[RangeTurn], voice: Voice) -> str:
    return when(turns[0].at, voice.timezone)


def recollections(earlier: Sequence[EarlierMemory], voice: Voice) -> str:
    """Earlier memories as the agent's own words, oldest first."""
    if not earlier:
        return "(nothing yet)"  # Persyn's own note, outside any fence
    lines = "\n".join(f"- ({when(m.moment, voice.timezone)}) {m.summary}" for m in earlier)
    return fence(lines, MEMORY)


def summary_request(
    voice: Voice,
    turns: Sequence[RangeTurn],
    earlier: Sequence[EarlierMemory],
    *,
    transcript_tokens: int | None = None,
) -> ModelRequest:
    """Ask for the first-person recollection of ``turns``, beside the memories before them.

    ``transcript_tokens`` is the call plan's budget for the dialog (None: no budget): past it
    the latest turns are kept whole.
    """
    messages: list[ChatMessage] = []
    if earlier:
        messages.append(ChatMessage(role="user", content=load("memory/earlier.md")))
        messages.append(
            ChatMessage(role="assistant", content="I remember:\n" + recollections(earlier, voice))
        )
    messages.append(
        ChatMessage(
            role="user",
            content=fill(
                load("memory/recollection.md"),
                when=_span(turns, voice),
                channel=fence(voice.channel, CHANNEL),
                # A summary needs dialog to summarise: a budget of 0 means none here.
                transcript=transcript(turns, voice, max_chars=_limit(transcript_tokens or None)),
            ),
        )
    )
    return ModelRequest(
        task=TaskType.SUMMARIZE,
        system=fill(load("memory/summary.md"), name=voice.name, persona=voice.persona),
        messages=messages,
        temperature=0.0,
        response_schema=SummaryReply.model_json_schema(),
    )


def _judged(
    voice: Voice,
    summary: str,
    turns: Sequence[RangeTurn],
    earlier: Sequence[EarlierMemory],
    transcript_tokens: int | None,
) -> list[ChatMessage]:
    quoted = (
        NOT_QUOTED
        if transcript_tokens == 0
        else transcript(turns, voice, max_chars=_limit(transcript_tokens))
    )
    body = fill(
        load("memory/judged.md"),
        earlier=recollections(earlier, voice),
        summary=fence(summary, FORMED),
        when=_span(turns, voice),
        channel=fence(voice.channel, CHANNEL),
        transcript=quoted,
    )
    return [ChatMessage(role="user", content=body)]


def rating_request(
    voice: Voice,
    summary: str,
    turns: Sequence[RangeTurn],
    earlier: Sequence[EarlierMemory],
    *,
    transcript_tokens: int | None = None,
) -> ModelRequest:
    """Ask for the importance rating against the rubric.

    ``transcript_tokens`` is the call plan's budget for the dialog (None: no budget; 0: none
    quoted, the memory is rated from its summary).
    """
    return ModelRequest(
        task=TaskType.RATE,
        system=fill(load("memory/rating.md"), name=voice.name),
        messages=_judged(voice, summary, turns, earlier, transcript_tokens),
        temperature=0.0,
        response_schema=RatingReply.model_json_schema(),
    )


def classification_request(
    voice: Voice,
    summary: str,
    turns: Sequence[RangeTurn],
    earlier: Sequence[EarlierMemory],
    *,
    transcript_tokens: int | None = None,
) -> ModelRequest:
    """Ask for the emotion distribution, the sensitivity and the topic tags.

    ``transcript_tokens`` is the call plan's budget for the dialog (None: no budget; 0: none
    quoted, the memory is classified from its summary).
    """
    return ModelRequest(
        task=TaskType.CLASSIFY,
        system=fill(load("memory/classification.md"), name=voice.name),
        messages=_judged(voice, summary, turns, earlier, transcript_tokens),
        temperature=0.0,
        response_schema=ClassificationReply.model_json_schema(),
    )
