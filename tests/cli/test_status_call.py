"""``persyn status`` says in words when a live call holds an agent's lock."""

from __future__ import annotations

from datetime import UTC, datetime

from cli.stack import inbox_lines
from schemas.agents import CallHold
from schemas.voice import CallBegan
from usecases.inboxes import InboxView

NOW = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)


def _hold(*, since: datetime | None) -> CallHold:
    call = CallBegan(call_id="xyz", tenant="t", person_name="Grace", idle_timeout_s=600)
    return CallHold(call=call, asked_at=NOW, since=since, heard_at=NOW)


def test_a_call_holding_the_lock_is_said_in_words_with_how_long() -> None:
    view = InboxView(
        agent="ada", reachable=True, queued=1, call=_hold(since=NOW), call_seconds=192.0
    )
    assert inbox_lines([view]) == [
        "  ada: 1 queued, oldest waiting -",
        "    On a call with Grace (call xyz) for 3.2min: other channels wait for it",
    ]


def test_a_call_waiting_for_the_lock_and_the_calls_behind_it_are_said_too() -> None:
    view = InboxView(agent="ada", reachable=True, call=_hold(since=None), calls_waiting=2)
    assert inbox_lines([view])[1:] == [
        "    On a call with Grace (call xyz): takes the lock when the event in flight ends",
        "    2 more call(s) waiting for the lock",
    ]


def test_no_call_adds_no_line() -> None:
    assert inbox_lines([InboxView(agent="ada", reachable=True)]) == [
        "  ada: 0 queued, oldest waiting -"
    ]
