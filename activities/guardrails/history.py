"""The slice of interaction history a rule set reads, loaded once per evaluation.

Evaluators are pure functions over this snapshot, so one database round per exchange serves
every rule, and a benchmark or a unit test can build one by hand. The loader sizes each part
from the rules: the longest window any rule reads, and no more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from schemas.guardrails import (
    BurstPattern,
    ConflictPattern,
    GuardrailRule,
    InjectionPattern,
    ProhibitedPattern,
    SensitivePattern,
)


@dataclass(frozen=True)
class Turn:
    """One dialog turn as the evaluators see it."""

    id: str
    role: str
    text: str
    at: datetime
    person_id: str | None = None
    conversation_id: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """One tool call's result text."""

    id: str
    name: str
    text: str


@dataclass(frozen=True)
class History:
    """What the rules read about one exchange.

    Attributes:
        now: The moment of evaluation (windows end here).
        inbound: The exchange's input turn.
        reply: The agent's reply (or the candidate, before it is sent).
        replies: The agent's replies before ``reply`` in this conversation, oldest first.
        conversation: The person's latest turns in this conversation, oldest first.
        person: The person's inbound turns across conversations and channels in the window.
        channel: Inbound turns on this channel in the window, from anyone.
        tool_results: What the exchange's tool calls returned.
        hostility: Model-rated hostility by turn ID (rules with ``classify``; else empty).
    """

    now: datetime
    inbound: Turn | None = None
    reply: Turn | None = None
    replies: Sequence[Turn] = field(default_factory=tuple)
    conversation: Sequence[Turn] = field(default_factory=tuple)
    person: Sequence[Turn] = field(default_factory=tuple)
    channel: Sequence[Turn] = field(default_factory=tuple)
    tool_results: Sequence[ToolResult] = field(default_factory=tuple)
    hostility: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Needs:
    """How much history a rule set reads."""

    conversation_turns: int = 0
    earlier_replies: int = 0
    """The agent's replies before this one in the conversation."""
    person_window: timedelta | None = None
    channel_window: timedelta | None = None
    tool_results: bool = False
    classify: bool = False
    """Some rule asks the model to rate the conversation's turns."""


def needs(rules: Sequence[GuardrailRule]) -> Needs:
    """The history ``rules`` read: the most turns and the longest windows among them."""
    turns, person, channel, tools, classify = 0, timedelta(0), timedelta(0), False, False
    replies = 0
    for rule in rules:
        pattern = rule.pattern
        if isinstance(pattern, ConflictPattern):
            turns = max(turns, pattern.turns)
            classify = classify or pattern.classify
        elif isinstance(pattern, ProhibitedPattern):
            person = max(person, timedelta(hours=pattern.window_hours))
        elif isinstance(pattern, BurstPattern):
            window = timedelta(seconds=pattern.window_seconds)
            if pattern.per == "person":
                person = max(person, window)
            else:
                channel = max(channel, window)
        elif isinstance(pattern, InjectionPattern):
            tools = tools or "tool_results" in pattern.sources
        elif isinstance(pattern, SensitivePattern):
            replies = max(replies, pattern.replies - 1)
    return Needs(
        conversation_turns=turns,
        earlier_replies=replies,
        person_window=person or None,
        channel_window=channel or None,
        tool_results=tools,
        classify=classify,
    )
