"""The pattern evaluators: one small function per pattern kind, over a history snapshot.

Each returns a :class:`Match` (what it saw, with the turn IDs that show it) or ``None``. They
do no I/O, so the screen and the background evaluation share them, and a slow or broken one
is a bug in one function, caught per rule by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from itertools import accumulate, pairwise
from typing import Any

from activities.context.normalise import normalise
from activities.guardrails.history import History, Turn
from activities.guardrails.hostility import hostility
from activities.guardrails.injection import detect_injection
from activities.guardrails.sensitive import find_sensitive
from schemas.guardrails import (
    BurstPattern,
    ConflictPattern,
    GuardrailRule,
    InjectionPattern,
    ProhibitedPattern,
    SensitivePattern,
)

MAX_EVIDENCE = 50


@dataclass(frozen=True)
class Match:
    """A pattern seen: a one-line summary and the IDs of the turns (or tool calls) behind it."""

    summary: str
    evidence: tuple[str, ...]


def escalating_conflict(pattern: ConflictPattern, history: History) -> Match | None:
    """The person's last ``rising`` turns each more hostile, the latest past the threshold."""
    turns = [t for t in history.conversation if t.role == "person"][-pattern.turns :]
    if len(turns) < pattern.rising:
        return None
    streak = turns[-pattern.rising :]
    rated = history.hostility if pattern.classify else {}
    scores = [rated[t.id] if t.id in rated else hostility(t.text) for t in streak]
    # The streak starts already hostile: one outburst after calm turns is not an escalation.
    if scores[0] <= 0 or scores[-1] < pattern.threshold:
        return None
    if any(later <= earlier for earlier, later in pairwise(scores)):
        return None
    shown = " -> ".join(f"{s:.2f}" for s in scores)
    return Match(
        summary=f"hostility rose over {len(streak)} turns ({shown})",
        evidence=tuple(t.id for t in streak),
    )


@lru_cache(maxsize=512)
def _phrases(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in phrases), re.IGNORECASE)


def _says(matcher: re.Pattern[str], text: str) -> bool:
    """Whether an operator's phrase matches ``text`` as written or as normalised.

    Normalised, a fullwidth or homoglyph request is read as plain; as written, a phrase in a
    script the normalisation folds (a Cyrillic or accented phrase) still matches itself.
    """
    return matcher.search(text) is not None or matcher.search(normalise(text)) is not None


def prohibited_requests(pattern: ProhibitedPattern, history: History) -> Match | None:
    """The current input is a prohibited request, and the person's ``count``-th in the window."""
    if history.inbound is None:
        return None
    matcher = _phrases(tuple(pattern.phrases))
    if not _says(matcher, history.inbound.text):
        return None
    since = history.now - timedelta(hours=pattern.window_hours)
    hits = _unique(
        t for t in [*history.person, history.inbound] if t.at >= since and _says(matcher, t.text)
    )
    if len(hits) < pattern.count:
        return None
    places = len({t.conversation_id for t in hits})
    return Match(
        summary=f"{len(hits)} prohibited requests in {pattern.window_hours:g} h "
        f"across {places} conversation(s)",
        evidence=tuple(t.id for t in hits[-MAX_EVIDENCE:]),
    )


def message_burst(pattern: BurstPattern, history: History) -> Match | None:
    """At least ``messages`` inbound turns within ``window_seconds`` of now."""
    pool = history.person if pattern.per == "person" else history.channel
    since = history.now - timedelta(seconds=pattern.window_seconds)
    extra = [history.inbound] if history.inbound is not None else []
    recent = _unique(t for t in [*pool, *extra] if t.at >= since)
    if len(recent) < pattern.messages:
        return None
    return Match(
        summary=f"{len(recent)} messages per {pattern.per} in {pattern.window_seconds} s",
        evidence=tuple(t.id for t in recent[-MAX_EVIDENCE:]),
    )


def prompt_injection(pattern: InjectionPattern, history: History) -> Match | None:
    """An injection attempt in the input or in a tool's result."""
    texts: list[tuple[str, str, str]] = []
    if "inbound" in pattern.sources and history.inbound is not None:
        texts.append(("the message", history.inbound.id, history.inbound.text))
    if "tool_results" in pattern.sources:
        texts.extend((f"tool {r.name}", r.id, r.text) for r in history.tool_results)
    for where, ident, text in texts:
        finding = detect_injection(text)
        if len(finding.signals) >= pattern.min_signals:
            return Match(
                summary=f"injection attempt in {where}: {', '.join(finding.signals)}",
                evidence=(ident,),
            )
    return None


def sensitive_data(pattern: SensitivePattern, history: History) -> Match | None:
    """The reply carries sensitive data, alone or read on from the agent's previous replies.

    The recent replies are read as one text (each normalised, joined by a space), so a card
    number given half in one reply and half in the next is found; only what reaches into the
    reply being checked counts, so a secret said earlier does not hold back every later reply.
    """
    if history.reply is None:
        return None
    earlier = pattern.replies - 1
    turns = [*(list(history.replies)[-earlier:] if earlier else []), history.reply]
    parts = [normalise(t.text) for t in turns]
    ends = list(accumulate(len(part) + 1 for part in parts))  # each part and its space
    reply_start = ends[-2] if len(parts) > 1 else 0
    found = [f for f in find_sensitive(" ".join(parts), pattern.detect) if f.end > reply_start]
    if not found:
        return None
    kinds = list(dict.fromkeys(f.kind for f in found))
    first = min(f.start for f in found)
    evidence = tuple(t.id for t, end in zip(turns, ends, strict=True) if end > first)
    where = "reply carries" if len(evidence) == 1 else f"replies ({len(evidence)}) carry"
    return Match(summary=f"{where} {', '.join(kinds)}", evidence=evidence)


def _unique(turns: Any) -> list[Turn]:
    seen: dict[str, Turn] = {}
    for turn in turns:
        seen.setdefault(turn.id, turn)
    return sorted(seen.values(), key=lambda t: t.at)


_EVALUATORS: dict[str, Callable[[Any, History], Match | None]] = {
    "escalating_conflict": escalating_conflict,
    "prohibited_requests": prohibited_requests,
    "message_burst": message_burst,
    "prompt_injection": prompt_injection,
    "sensitive_data": sensitive_data,
}


def once_within(rule: GuardrailRule) -> tuple[timedelta, str] | None:
    """How long a firing of ``rule`` stands for what follows it, and over which scope.

    A burst is one event however many messages it holds: once reported, the messages after it
    within the rule's window are the same burst, not a new one for the supervisor. Every other
    pattern reports each exchange it shows in.
    """
    pattern = rule.pattern
    if isinstance(pattern, BurstPattern):
        return timedelta(seconds=pattern.window_seconds), pattern.per
    return None


def evaluate(rule: GuardrailRule, history: History) -> Match | None:
    """Whether ``rule``'s pattern shows in ``history`` (raises what its evaluator raises)."""
    return _EVALUATORS[rule.pattern.kind](rule.pattern, history)


@dataclass(frozen=True)
class Outcome:
    """Every rule's verdict: the matches, and the rules whose evaluator raised."""

    matches: list[tuple[GuardrailRule, Match]]
    failed: list[str]


def evaluate_all(
    rules: Sequence[GuardrailRule], history: History, *, on_error: Callable[[str], None]
) -> Outcome:
    """Run every rule; one that raises is reported to ``on_error`` and skipped (fail soft)."""
    matches: list[tuple[GuardrailRule, Match]] = []
    failed: list[str] = []
    for rule in rules:
        try:
            match = evaluate(rule, history)
        except Exception:
            on_error(rule.id)
            failed.append(rule.id)
            continue
        if match is not None:
            matches.append((rule, match))
    return Outcome(matches=matches, failed=failed)
